"""The browser check: open every page of a built book in headless Chromium, as a reader would.

Debian's ``chromium`` and ``chromium-driver`` drive it (Selenium, pointed at the system
chromedriver so nothing is downloaded). A page fails on raw TeX in its visible text (MathJax
did not typeset it, e.g. because it was to come from a CDN), an image that did not load, a
local link or ``#fragment`` that leads nowhere, a table cell reading ``nan`` or ``None`` where
a blank is meant, a header still spelled as an identifier (``top8_share``), a figure drawn
more than :data:`MAX_SHRINK` times wider than the column shows it (its text shrinks below
reading size), a glued table captioned as a figure, a number on a chapter's page that does not
carry the chapter's number, a figure or table number captioned on two pages (a chapter's task
pages number theirs apart: "Table 6.2.5"), a page that opens with code instead of prose, or a
JavaScript error or failed request in the console, a table wider than its column without the
scroll cue ``book/_static/wide-tables.js`` gives it, or a landing page whose glued findings do
not start in its first screen. A screenshot of every page is kept under
``<build>/screenshots/``, with every page's height (``heights.tsv``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\frac\{|\\mathrm\{")
SKIP = {"genindex.html", "search.html"}
MAX_SHRINK = 1.2
"""How much narrower than drawn a figure may be shown: the pages' figures are drawn at 110 px
per inch and CSS shows 96 per inch, so a figure at its native size is shown 110/96 = 1.15
times narrower than its pixels (1.2 allows for rounding). More than that, and it is wider than
the column at its native size: its text shrinks below the size it was set at."""
CHAPTER_PAGE = re.compile(r"^ch(\d\d)_")
ROOT_PAGE = "book/intro.html"
FIRST_SCREEN = 1000
"""Pixels of the landing page a reader sees first: its glued findings must start within them."""
SCREEN = 900
"""Pixels of one screen of a 1,400 x 900 window, the unit page heights are counted in
(``screenshots/heights.tsv``: page, pixels, screens)."""


def ensure_chromium() -> None:
    """Install Debian's chromium and chromium-driver when they are missing (saying so)."""
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        return
    apt = shutil.which("apt-get")
    if apt is None:
        raise RuntimeError("the browser check needs Debian's chromium and chromium-driver")
    print("browser check: installing Debian's chromium and chromium-driver (apt-get)")
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    subprocess.run([apt, "update", "-qq"], check=True, env=env, capture_output=True)
    subprocess.run(
        [apt, "install", "-y", "-qq", "chromium", "chromium-driver"],
        check=True,
        env=env,
        capture_output=True,
    )


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1400,1600",
        "--disable-dev-shm-usage",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)


def _ids(page: Path, cache: dict[Path, set[str]]) -> set[str]:
    if page not in cache:
        cache[page] = set(re.findall(r'\bid="([^"]+)"', page.read_text(errors="replace")))
    return cache[page]


def _settle(driver, timeout_s: float = 10.0) -> None:
    """Wait until the current document has loaded and has a body (a meta-refresh redirect
    replaces the document after ``get`` returns)."""
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready = driver.execute_script(
            "return document.readyState === 'complete' && document.body !== null"
            " && !document.querySelector('meta[http-equiv=\"refresh\"]')"
        )
        if ready:
            return
        time.sleep(0.1)


def check_book(html_root: Path) -> dict[str, list[str]]:
    """Problems per page (empty lists: the page reads well). Keeps a screenshot per page."""
    html_root = Path(html_root)
    shots = html_root.parent / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages = sorted(
        p for p in html_root.rglob("*.html") if "_static" not in p.parts and p.name not in SKIP
    )
    ids: dict[Path, set[str]] = {}
    report: dict[str, list[str]] = {}
    heights: dict[str, int] = {}
    captioned: dict[str, list[str]] = {}  # a caption's number -> the pages that caption it
    driver = _driver()
    try:
        for page in pages:
            rel = str(page.relative_to(html_root))
            problems: list[str] = []
            driver.get(page.as_uri())
            _settle(driver)  # index.html redirects: wait for the page it leads to
            here = Path(unquote(urlsplit(driver.current_url).path))  # after any redirect
            driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "if (window.MathJax && MathJax.startup && MathJax.startup.promise)"
                "  MathJax.startup.promise.then(() => done(true), () => done(false));"
                "else done(true);"
            )
            text = driver.execute_script("return document.body.innerText")
            for m in RAW_TEX.finditer(text):
                problems.append(f"raw TeX: ...{text[max(0, m.start() - 30) : m.end() + 30]!r}...")
                break
            broken = driver.execute_script(
                "return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
                ".map(i => i.getAttribute('src'))"
            )
            problems += [f"broken image: {src}" for src in broken]
            hrefs = driver.execute_script(
                "return [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))"
            )
            for href in hrefs:
                parts = urlsplit(href)
                if parts.scheme or href.startswith("//") or href.startswith("mailto:"):
                    continue
                target = (here.parent / unquote(parts.path)).resolve() if parts.path else here
                if target.is_dir():
                    target = target / "index.html"
                if not target.is_file():
                    problems.append(f"broken link: {href}")
                elif parts.fragment and target.suffix == ".html":
                    if unquote(parts.fragment) not in _ids(target, ids):
                        problems.append(f"broken fragment: {href}")
            blanks = driver.execute_script(
                "return [...document.querySelectorAll('table td, table th')]"
                ".map(c => c.innerText.trim()).filter(s => /^(nan|NaN|None|<NA>)$/.test(s))"
            )
            if blanks:
                problems.append(f"{len(blanks)} table cells read {blanks[0]!r} (blank expected)")
            snake = driver.execute_script(
                "return [...document.querySelectorAll('table thead th')]"
                ".filter(c => !c.querySelector('code'))"  # a name shown as code: as written
                ".map(c => c.innerText.trim()).filter(s => /^[a-z0-9]+(_[a-z0-9]+)+$/.test(s))"
            )
            if snake:
                problems.append(f"{len(snake)} headers read as identifiers, e.g. {snake[0]!r}")
            shrunk = driver.execute_script(
                "return [...document.querySelectorAll('main img')]"
                ".filter(i => i.clientWidth > 0 && i.naturalWidth > arguments[0] * i.clientWidth)"
                ".map(i => [i.getAttribute('src'), i.naturalWidth, i.clientWidth])",
                MAX_SHRINK,
            )
            problems += [
                f"figure {src} drawn {nw} px wide is shown at {cw} px (text {nw / cw:.1f}x smaller)"
                for src, nw, cw in shrunk
            ]
            numbers = driver.execute_script(
                "return [...document.querySelectorAll('main .caption-number')].map("
                "e => [e.closest('[id]') ? e.closest('[id]').id : '', e.textContent.trim()])"
            )
            problems += [
                f"table {fid} captioned {n!r}"
                for fid, n in numbers
                if fid.startswith("tbl-") and not n.startswith("Table")
            ]
            for n in sorted({n for _, n in numbers if n}):
                captioned.setdefault(n, []).append(rel)
            chapter = CHAPTER_PAGE.match(page.name)
            if chapter:
                prefix = f"{int(chapter.group(1))}."
                problems += [
                    f"{n!r} on a chapter-{prefix[:-1]} page"
                    for _, n in numbers
                    if n and n.split()[-1][: len(prefix)] != prefix
                ]
            clipped = driver.execute_script(
                "return [...document.querySelectorAll('.bd-article table')]"
                ".filter(t => t.scrollWidth > t.clientWidth + 1"
                " && !t.classList.contains('scrolls'))"
                ".map(t => (t.closest('[id]') || {id: ''}).id)"
            )
            problems += [
                f"table {fid or '(no id)'} clipped without a scroll cue" for fid in clipped
            ]
            if rel == ROOT_PAGE:
                top = driver.execute_script(
                    "const f = document.querySelector('ul.findings');"
                    "return f && f.children.length ? f.getBoundingClientRect().top : null;"
                )
                if top is None or top > FIRST_SCREEN:
                    problems.append(f"the glued findings are not in the first {FIRST_SCREEN} px")
            heights[rel] = driver.execute_script("return document.documentElement.scrollHeight")
            first = driver.execute_script(
                "const a = document.querySelector('main article') || document.body;"
                "const f = a.querySelector('p, .admonition, div.cell_input, div.cell_output');"
                "return f ? f.className || f.tagName : '';"
            )
            if "cell_input" in first:
                problems.append("the page opens with code, not prose")
            for entry in driver.get_log("browser"):
                if entry["level"] == "SEVERE":
                    problems.append(f"console: {entry['message'][:200]}")
            driver.save_screenshot(str(shots / (rel.replace("/", "__") + ".png")))
            report[rel] = problems
    finally:
        driver.quit()
    for n, where in captioned.items():
        for rel in where:
            others = ", ".join(w for w in where if w != rel)
            if others:
                report[rel].append(f"{n!r} is captioned on another page too: {others}")
    (shots / "heights.tsv").write_text(
        "".join(f"{rel}\t{h}\t{h / SCREEN:.1f}\n" for rel, h in heights.items())
    )
    return report
