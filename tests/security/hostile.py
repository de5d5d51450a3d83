"""The catalogue of hostile answer texts used by the security and bad-input tests.

Each is a valid diagnosis (1-300 characters, no outer whitespace) that must be
stored byte for byte and shown as the literal text it is: never as markup,
never running script, never loading anything from another host.
"""

from __future__ import annotations

HOSTILE_TEXTS: dict[str, str] = {
    "markdown": (
        "**bold** _it_ # heading [link](https://example.invalid/x) "
        "![img](https://example.invalid/p.png) `code` :red[red] :material/home: $x^2$"
    ),
    "html": '<b>bold</b><img src=x onerror="window.__xss=1"><a href="https://example.invalid">a</a>',
    "script": "<script>window.__xss=1</script>",
    "svg": '<svg onload="window.__xss=1"><circle r="9"/></svg>',
    "iframe": '<iframe src="javascript:window.__xss=1"></iframe><style>body{color:red}</style>',
    "sql": "'); DROP TABLE responses; -- \" OR 1=1; SELECT * FROM answer_keys",
    "emoji": "Fracture 🦴🩻 👩🏽‍⚕️ 🇳🇱 ✔︎",
    "rtl": "ورم عظمي عظماني – שלום עולם",
    "bidi": "normal\u202elamron\u202c end \u2067isolate\u2069",
    "entities": "&lt;b&gt;not bold&lt;/b&gt; &amp; &#x3C;script&#x3E;",
    "newlines": "line one\nline two\ttabbed\r\nline three",
    "formula": '=HYPERLINK("https://example.invalid","click me")',
    "template": "C:\\path\\to %s {0} ${x} {{7*7}} <%= 7*7 %>",
}

# markers that appear in the DOM only if some text was interpreted as markup
INJECTED_SELECTORS = (
    "img[src='x']",
    "img[src*='example.invalid']",
    "a[href*='example.invalid']",
    "iframe",
    "svg[onload]",
    "script:not([src])",
)

# The script-injection sweep's payloads (tests/security/test_injection_sweep_browser.py):
# each would set window.__pwned, load from example.invalid or make a javascript: link
# if a page turned the text into markup. Short ones fit a reader code (64 characters).
PWNED_IMG = "<img src=x onerror=window.__pwned=1>"
PWNED_SCRIPT = "<script>window.__pwned=1</script>"
PWNED_LINK = '<a href="javascript:window.__pwned=1">a</a>'
PWNED_MARKDOWN = "[m](javascript:window.__pwned=1) ![i](https://example.invalid/p.png)"
PWNED_FORMULA = '=HYPERLINK("https://example.invalid","x")'
PWNED_ALL = " ".join((PWNED_FORMULA, PWNED_IMG, PWNED_SCRIPT, PWNED_LINK, PWNED_MARKDOWN))

# The detector, run in every frame of a page: what the payloads above would leave behind
# had they become markup, looked for in the document and every open shadow root. Text
# that merely SHOWS a payload (a text node, a title or aria-label, an input's value) is
# fine; an element whose URL or event-handler attribute carries it, or a script holding
# it, is an injection. Returns a list of findings (empty: clean).
INJECTION_PROBE = """() => {
    const found = [];
    if (window.__pwned !== undefined) found.push('window.__pwned is set');
    const urlAttrs = ['href', 'src', 'srcdoc', 'action', 'formaction', 'xlink:href', 'data'];
    const bad = (v) => /__pwned|example\\.invalid/.test(v) || /^\\s*javascript:/i.test(v);
    const walk = (root) => {
        for (const el of root.querySelectorAll('*')) {
            for (const attr of el.attributes) {
                const name = attr.name.toLowerCase();
                if ((name.startsWith('on') || urlAttrs.includes(name)) && bad(attr.value)) {
                    const tag = el.tagName.toLowerCase();
                    found.push(`<${tag} ${name}="${attr.value.slice(0, 80)}">`);
                }
            }
            if (el.tagName === 'SCRIPT' && /__pwned/.test(el.textContent || '')) {
                found.push('<script> holding the payload');
            }
            if (el.shadowRoot) walk(el.shadowRoot);
        }
    };
    walk(document);
    return found;
}"""
