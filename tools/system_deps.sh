#!/usr/bin/env bash
# The Debian packages the book (`make book`) and its tests (`make test`) need, installed when missing.
#
#   tools/system_deps.sh book   what building the book needs
#   tools/system_deps.sh test   that, plus what the tests need
#
# Run as root, or with passwordless sudo, it installs what is missing with apt-get; otherwise it
# stops at once and prints the exact command to run. Nothing is installed when nothing is missing.
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
[ "${#missing[@]}" -eq 0 ] && exit 0

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
