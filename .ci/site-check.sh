#!/usr/bin/env bash
# The certification site in a real browser: builds the site from the committed
# reports, checks that the committed copy (docs/site) is what they give, renders the front
# page and every SDK page in headless Chromium (Debian's package, installed if missing), checks
# that every relative link of every rendered page resolves to a file (and every #anchor to an
# element), and saves one screenshot of the front page (its path is printed).
#
#   bash .ci/site-check.sh            TOOLCERT=path/to/toolcert  SITE_SCREENSHOT=out.png
#
# Run from the repository's root. Exit 1 when the committed site is stale, a page does not
# render or a link is broken; the message says which.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
    echo "site-check: installing Debian's chromium"
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
TOOLCERT=${TOOLCERT:-target/release/toolcert}
if [ ! -x "$TOOLCERT" ]; then
    cargo build --release --quiet --bin toolcert
fi
# Built beside docs/site, at the same depth, so its links into the repository (reports,
# reproducers, notes' links) are byte for byte those of the committed copy.
site=$(mktemp -d docs/.site-check.XXXXXX)
profile=$(mktemp -d)
trap 'rm -rf "$site" "$profile"' EXIT
"$TOOLCERT" site --reports docs/certification/reports --out "$site" \
    --reproducers corpus/findings --notes docs/certification/notes

if ! diff -r -q docs/site "$site" >/dev/null; then
    diff -r -q docs/site "$site" | sed "s|$site|(rebuilt)|" | sed -n 1,20p
    echo "site-check: docs/site is stale: rm -rf docs/site && python3 examples/sdks/certification.py --site docs/site"
    exit 1
fi

browse() {
    # A fresh profile per run; no network is needed (the pages load nothing external).
    timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" "$@" 2>/dev/null
}

pages=("$site/index.html" "$site"/sdk/*.html)
dom=$(mktemp -d)
trap 'rm -rf "$site" "$profile" "$dom"' EXIT
for page in "${pages[@]}"; do
    out="$dom/$(basename "$(dirname "$page")")--$(basename "$page").dom"
    browse --dump-dom "file://$(realpath "$page")" >"$out" || { echo "site-check: chromium failed on $page"; exit 1; }
    printf '%s\t%s\n' "$page" "$out"
done >"$dom/list"
echo "site-check: rendered ${#pages[@]} pages"

# Links, read from the DOM Chromium rendered (not from the files): every relative href/src
# names a file that exists; an #anchor names an element id of its page.
python3 - "$dom/list" <<'EOF'
import html.parser, os, sys, urllib.parse

class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids, self.h1 = [], set(), 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "h1":
            self.h1 += 1
        for k in ("href", "src"):
            if a.get(k):
                self.links.append(a[k])

def parse(path):
    p = Links()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p

pages = [l.rstrip("\n").split("\t") for l in open(sys.argv[1], encoding="utf-8")]
ids_of = {}
bad, count = [], 0
for page, dom in pages:
    ids_of[os.path.realpath(page)] = parse(dom).ids
for page, dom in pages:
    p = parse(dom)
    if p.h1 != 1 or os.path.getsize(dom) < 500:
        bad.append(f"{page}: did not render (no heading)")
    for link in p.links:
        u = urllib.parse.urlsplit(link)
        if u.scheme or link.startswith("/"):
            bad.append(f"{page}: not a relative link: {link}")
            continue
        count += 1
        target = os.path.realpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(u.path))) if u.path else os.path.realpath(page)
        if not os.path.isfile(target):
            bad.append(f"{page}: {link} does not resolve")
        elif u.fragment and target in ids_of and u.fragment not in ids_of[target]:
            bad.append(f"{page}: {link}: no element #{u.fragment}")
for b in bad[:30]:
    print("site-check:", b)
if bad:
    sys.exit(f"site-check: {len(bad)} broken")
print(f"site-check: {count} links in {len(pages)} pages resolve")
EOF

shot=${SITE_SCREENSHOT:-${TMPDIR:-/tmp}/toolcert-site-front.png}
browse --window-size=1400,1000 --screenshot="$shot" "file://$(realpath "$site/index.html")" >/dev/null
[ -s "$shot" ] || { echo "site-check: no screenshot was written"; exit 1; }
echo "site-check: screenshot of the front page: $shot"
