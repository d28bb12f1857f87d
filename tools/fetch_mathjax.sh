#!/usr/bin/env bash
# Vendor a pinned MathJax into book/_vendor/mathjax, so the built site typesets
# math without any network. Idempotent: does nothing when the right version is there.
set -euo pipefail
version=3.2.2
sha256=1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09
dest=book/_vendor/mathjax
[ -f "$dest/.version" ] && [ "$(cat "$dest/.version")" = "$version" ] && exit 0
command -v npm >/dev/null || { echo "fetch_mathjax: npm is needed to fetch MathJax $version" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "mathjax@$version" >/dev/null)
echo "$sha256  $work/mathjax-$version.tgz" | sha256sum --check --quiet
tar -xzf "$work/mathjax-$version.tgz" -C "$work"
rm -rf "$dest" && mkdir -p "$dest/output/chtml/fonts"
es5="$work/package/es5"
# The combined TeX+MathML→CHTML component, the TeX extensions it loads on
# demand, the accessibility and menu parts its menu loads, and the web fonts.
cp "$es5/tex-mml-chtml.js" "$dest/"
cp -r "$es5/input" "$es5/a11y" "$es5/sre" "$es5/ui" "$dest/"
cp -r "$es5/output/chtml/fonts/woff-v2" "$dest/output/chtml/fonts/"
cp "$work/package/LICENSE" "$dest/LICENSE"
echo "$version" > "$dest/.version"
echo "fetch_mathjax: MathJax $version in $dest ($(du -sh "$dest" | cut -f1))"
