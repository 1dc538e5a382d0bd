# Faultline: `make demo` opens the Inventory sample in the shell; `make test` runs every test.
# Both first install the system libraries when they are missing (Debian/Ubuntu, apt-get).

APT_PACKAGES := libsqlite3-dev libedit-dev zlib1g-dev sqlite3 tmux
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test build deps samples sample clean crash-test crash-test-long asan tsan sanitize fuzz fuzz-smoke format lint docs

demo: deps build
	.build/debug/faultline Samples/Inventory/Inventory.sqlite

# The whole suite; it then says how many tests were skipped (../shared/corpus absent, …).
test: deps
	scripts/test.sh

build: deps
	swift build

# The test suite under AddressSanitizer, ThreadSanitizer, or both (own build folders).
asan: deps
	scripts/sanitize.sh address

tsan: deps
	scripts/sanitize.sh thread

sanitize: deps
	scripts/sanitize.sh all

# Installs only what is missing, so a machine that has everything is not touched.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; \
	fi

# Crash consistency and concurrent writers (Documentation/Reliability.md): the normal run, and
# the long one (hundreds of SIGKILLs, 4 processes x 200 saves per merge policy).
crash-test: deps
	swift test --filter FaultlineTortureTests

crash-test-long: deps
	FAULTLINE_LONG_TESTS=1 swift test --filter FaultlineTortureTests

# Rebuilds every sample store from its model and seed rows, and its tour transcript.
samples: build
	@for s in Inventory Recipes Triage Books; do \
	  Samples/build-store.sh $$s && \
	  .build/debug/faultline Samples/$$s/$$s.sqlite < Samples/$$s/tour.fl > Samples/$$s/tour.transcript 2>&1 || exit 1; \
	done

# Samples/RecipesApp: a package whose typed classes the FaultlineGenerate plugin writes at build
# time; builds it (Faultline again, in its own build folder) and runs it.
sample: deps
	swift build --package-path Samples/RecipesApp --build-path .build/samples/RecipesApp
	.build/samples/RecipesApp/debug/RecipesApp

# libFuzzer with AddressSanitizer (Fuzz/): every target FUZZ_MINUTES minutes (default 5), one
# after another, growing Fuzz/.work/corpus; crashes land in Fuzz/.work/artifacts. FUZZ_TARGETS
# picks some of predicate, xml-model, compiled-model, shell. fuzz-smoke is CI's short run.
FUZZ_MINUTES ?= 5
FUZZ_TARGETS ?=
fuzz: deps
	FUZZ_MINUTES=$(FUZZ_MINUTES) Fuzz/run.sh $(FUZZ_TARGETS)

fuzz-smoke: deps
	Fuzz/run.sh --smoke $(FUZZ_TARGETS)

clean:
	rm -rf .build .build-asan .build-tsan Fuzz/.build

# swift-format with the house style (.swift-format: 4 spaces, long lines, one-line `;` idioms
# such as `lock(); defer { unlock() }` allowed on purpose). `make format FILES="a.swift b.swift"`
# formats those files (default: the files changed since HEAD); `make lint` reports, for the
# same files, what format would change.
FILES ?= $(shell git diff --name-only HEAD -- '*.swift'; git ls-files --others --exclude-standard -- '*.swift')
format:
	@[ -z "$(strip $(FILES))" ] || swift-format format --in-place --configuration .swift-format $(FILES)

lint:
	@[ -z "$(strip $(FILES))" ] || swift-format lint --configuration .swift-format $(FILES)

# The library's documentation with docc, warnings as errors (CI runs it).
docs:
	scripts/docs.sh
