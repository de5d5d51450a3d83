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
