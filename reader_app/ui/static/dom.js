// readerstudy components' shared DOM helper, put before each component's own script
// (ui/components/case_viewer.static_text).

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}
