#!/usr/bin/env bash
# The Debian packages the book (`make book`) and its tests (`make test`) need, installed when missing.
#
#   tools/system_deps.sh book   what building the book needs
#   tools/system_deps.sh test   that, plus what the tests need
#
# Run as root, or with passwordless sudo, it installs what is missing with apt-get; otherwise it
# stops at once and prints the exact command to run. Nothing is installed when nothing is missing.
# Then it makes sure chapter 4's real PDFs are in _build/external (see the end of this file).
set -euo pipefail

target="${1:-book}"

# Needed to build the book:
#   python3-venv, python3-dev, gcc   the venv, and compiling chunklab/_topk.c (the BM25 ranker)
#   nodejs, npm                      fetch MathJax, require.js and the widget manager for the offline site
#   tesseract-ocr(-chi-sim)          chapter 4 OCRs a scanned page; without it the chapter would describe
#                                    a step that did not run, so the build requires it
#   fonts-noto-cjk                   Chinese glyphs in the browser (matplotlib uses mplfonts' copy)
book=(python3-venv python3-dev gcc nodejs npm tesseract-ocr tesseract-ocr-chi-sim fonts-noto-cjk)
# Needed by the tests as well:
#   chromium, chromium-driver        the headless-browser tests of the site and of JupyterLab
#   debian-edu-doc-legacy-zh-cn      a real Chinese PDF nobody here wrote (Debian Edu's Audacity manual,
#                                    GPL-2+) for the PDF-in-a-folder tests; ~24 MB with its -en dependency
test=(chromium chromium-driver debian-edu-doc-legacy-zh-cn)

case "$target" in
  book) wanted=("${book[@]}") ;;
  test) wanted=("${book[@]}" "${test[@]}") ;;
  *) echo "usage: $0 book|test" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "system_deps: not a Debian-like system; install the equivalents of: ${wanted[*]}" >&2
  exit 1
fi

missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
# npm may come from elsewhere (nvm, a tarball): a working npm on the PATH is enough.
if command -v npm >/dev/null 2>&1; then
  kept=()
  for pkg in "${missing[@]}"; do [[ "$pkg" == npm || "$pkg" == nodejs ]] || kept+=("$pkg"); done
  missing=("${kept[@]+"${kept[@]}"}")
fi
if [ "${#missing[@]}" -gt 0 ]; then
  cmd="apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    echo "system_deps: installing ${missing[*]}"
    sh -c "$cmd"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "system_deps: installing ${missing[*]} (sudo)"
    sudo sh -c "$cmd"
  else
    echo "system_deps: missing Debian packages: ${missing[*]}" >&2
    echo "run this, then 'make $target' again:" >&2
    echo "  sudo sh -c '$cmd'" >&2
    exit 1
  fi
fi

# Real Chinese PDFs nobody here wrote, for chapter 4's layout section (book and test):
# two example PDFs from the documentation of Debian's texlive-lang-chinese (LaTeX Project Public
# License). Only the .deb is fetched (`apt-get download`, no root, nothing installed) into
# _build/cache/debs, and only these files are extracted, into _build/external; neither is
# committed. When the .deb cannot be fetched the book still builds: chapter 4 then says the PDFs
# are missing and how to get them, and their tests skip. Keep in step with
# chunklab.book.pdfgen.EXTERNAL_PDFS.
root="$(cd "$(dirname "$0")/.." && pwd)"
ext="$root/_build/external"
debs="$root/_build/cache/debs"
deb_pkg=texlive-lang-chinese
external=(
  "usr/share/doc/texlive-doc/xelatex/exam-zh/examples/example-multiple.pdf exam-zh-example-multiple.pdf"
  "usr/share/doc/texlive-doc/latex/njurepo/example.pdf njurepo-example.pdf"
)
need=()
for item in "${external[@]}"; do
  set -- $item
  [ -s "$ext/$2" ] || need+=("$item")
done
if [ "${#need[@]}" -gt 0 ]; then
  mkdir -p "$ext" "$debs"
  deb="$(ls "$debs/${deb_pkg}"_*.deb 2>/dev/null | tail -n 1 || true)"
  if [ -z "$deb" ]; then
    echo "system_deps: fetching the $deb_pkg .deb (about 50 MB, once) for chapter 4's real PDFs"
    if ! (cd "$debs" && apt-get download -q "$deb_pkg" >/dev/null 2>&1); then
      if [ "$(id -u)" -eq 0 ]; then   # no package lists yet: refresh them once and retry
        apt-get update -qq >/dev/null 2>&1 || true
        (cd "$debs" && apt-get download -q "$deb_pkg" >/dev/null 2>&1) || true
      fi
    fi
    deb="$(ls "$debs/${deb_pkg}"_*.deb 2>/dev/null | tail -n 1 || true)"
  fi
  if [ -z "$deb" ]; then
    echo "system_deps: warning: could not fetch $deb_pkg; chapter 4 will describe its real PDFs as missing" >&2
    echo "  to get them: cd $debs && apt-get download $deb_pkg, then run this script again" >&2
  else
    tmp="$(mktemp -d)"
    paths=()
    for item in "${need[@]}"; do set -- $item; paths+=("./$1"); done
    if dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "${paths[@]}"; then
      for item in "${need[@]}"; do set -- $item; mv "$tmp/$1" "$ext/$2"; done
      echo "system_deps: extracted ${#need[@]} PDF(s) from $(basename "$deb") into _build/external"
    else
      echo "system_deps: warning: could not extract the PDFs from $deb" >&2
    fi
    rm -rf "$tmp"
  fi
fi
