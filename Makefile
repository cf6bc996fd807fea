# streakd: build and install the binary, the systemd units, the journal catalog,
# the man pages, the shell completions and the icon. See "Operator's guide" in README.md.
#
#   make install            system-wide: PREFIX=/usr/local, units for the system manager
#   make install-user       one desktop user: PREFIX=~/.local, units in ~/.config/systemd/user
#   make uninstall          / make uninstall-user: remove what those installed (never the
#                           store or the configuration)
#   make install-catalog    the journal catalog alone (as root; install-user cannot)
#   make deb                a Debian package (DEB_DIR, default .build/deb): what `make install
#                           PREFIX=/usr` installs, the user units in /usr/lib/systemd/user too
#
# Variables (on the command line): PREFIX, DESTDIR (a staging root: nothing outside it
# is touched, no systemctl is run), BINDIR, MANDIR, DATADIR, SYSTEMDUNITDIR,
# USERUNITDIR, CATALOGDIR, SWIFT, SWIFT_BUILD_FLAGS, and STREAKD (a streakd binary
# already built, installed as is instead of building one).

SHELL := /bin/sh

ifeq ($(origin PREFIX),undefined)
SYSTEM_PREFIX := /usr/local
USER_PREFIX := $(HOME)/.local
else
SYSTEM_PREFIX := $(PREFIX)
USER_PREFIX := $(PREFIX)
endif

DESTDIR ?=
SWIFT ?= swift
# A release build with the Swift runtime linked in: the binary runs without the toolchain.
SWIFT_BUILD_FLAGS ?= -c release --static-swift-stdlib
MAN_DATE ?= $(shell git log -1 --format=%cs 2>/dev/null || date -u +%F)
# streakd's version (one place: Sources/streakd/Streakd.swift) and the commit it is built from,
# which the build bakes in (`streakd --version`; Package.swift reads STREAKD_COMMIT). Outside a
# git checkout the commit is empty and --version says so.
VERSION := $(shell sed -n 's/^ *static let version = "\(.*\)"/\1/p' Sources/streakd/Streakd.swift)
STREAKD_COMMIT ?= $(shell git describe --always --dirty --tags 2>/dev/null)
export STREAKD_COMMIT
INSTALL ?= install

# Where things go; recursively expanded, so they follow the prefix of the target run.
P = $(SYSTEM_PREFIX)
BINDIR = $(P)/bin
DATADIR = $(P)/share
MANDIR = $(DATADIR)/man
DOCDIR = $(DATADIR)/doc/streakd
BASHCOMPDIR = $(DATADIR)/bash-completion/completions
ZSHCOMPDIR = $(DATADIR)/zsh/site-functions
FISHCOMPDIR = $(DATADIR)/fish/vendor_completions.d
ICONDIR = $(DATADIR)/icons/hicolor/scalable/apps
# systemd reads units and catalogs under /usr/lib and /usr/local/lib (and /etc for units).
SYSTEMDUNITDIR = $(P)/lib/systemd/system
CATALOGDIR = $(P)/lib/systemd/catalog
XDG_CONFIG_HOME ?= $(HOME)/.config
USERUNITDIR = $(XDG_CONFIG_HOME)/systemd/user

install install-catalog uninstall: P = $(SYSTEM_PREFIX)
install-user uninstall-user: P = $(USER_PREFIX)

OUT := .build/deploy
UNITS := streakd-tick.service streakd-tick.timer streakd-refill.service streakd-refill.timer \
	streakd-check.service streakd-check.timer streakd.socket streakd.service
TIMERS := streakd-tick.timer streakd-refill.timer streakd-check.timer
# The HTTP API (streakd serve), started by its socket at the first connection.
API_UNITS := streakd.socket streakd.service

# The binary: STREAKD if given, else the one `swift build $(SWIFT_BUILD_FLAGS)` makes.
ifeq ($(strip $(STREAKD)),)
BIN = $(shell $(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path </dev/null)/streakd
else
BIN = $(STREAKD)
endif

# Is a systemd manager running here (sd_booted)? Only then, and only without DESTDIR,
# do the install targets talk to it.
BOOTED = $(if $(DESTDIR),,$(wildcard /run/systemd/system))

.PHONY: all build man completions version install install-user install-catalog uninstall uninstall-user \
	install-common uninstall-common check-units clean-deploy deb

all: build man completions

# What `streakd --version` of a build by this Makefile says it is.
version:
	@echo "streakd $(VERSION) ($(if $(STREAKD_COMMIT),git $(STREAKD_COMMIT),commit unknown: built without make))"

build:
ifeq ($(strip $(STREAKD)),)
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product streakd </dev/null
else
	@test -x "$(STREAKD)" || { echo "make: STREAKD=$(STREAKD) is not an executable file" >&2; exit 66; }
endif

# The man pages, written by hand in deploy/ (readable there: man deploy/streakd.1), with
# this build's version and date set on their .TH line; the
# completions from the binary (remade when it is newer).
man: $(OUT)/streakd.1 $(OUT)/streakd.toml.5
completions: $(OUT)/streakd.bash $(OUT)/_streakd $(OUT)/streakd.fish

$(OUT)/streakd.1 $(OUT)/streakd.toml.5: $(OUT)/%: deploy/%
	@mkdir -p $(OUT)
	sed -e '/^\.TH /s|"[^"]*" "streakd [^"]*"|"$(MAN_DATE)" "streakd $(VERSION)"|' $< >$@.tmp && mv -f $@.tmp $@

$(OUT)/streakd.bash: $(BIN)
	@mkdir -p $(OUT)
	"$(BIN)" --generate-completion-script bash >$@.tmp && mv -f $@.tmp $@
$(OUT)/_streakd: $(BIN)
	@mkdir -p $(OUT)
	"$(BIN)" --generate-completion-script zsh >$@.tmp && mv -f $@.tmp $@
$(OUT)/streakd.fish: $(BIN)
	@mkdir -p $(OUT)
	"$(BIN)" --generate-completion-script fish >$@.tmp && mv -f $@.tmp $@

# The binary is made by `build` (a phony target: swift decides what is out of date).
$(BIN): build

# What install and install-user share: binary, man pages, completions, icon, example configuration.
install-common: build man completions
	$(INSTALL) -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man5" "$(DESTDIR)$(DOCDIR)" \
		"$(DESTDIR)$(BASHCOMPDIR)" "$(DESTDIR)$(ZSHCOMPDIR)" "$(DESTDIR)$(FISHCOMPDIR)" "$(DESTDIR)$(ICONDIR)"
	$(INSTALL) -m 0755 "$(BIN)" "$(DESTDIR)$(BINDIR)/streakd"
	$(INSTALL) -m 0644 $(OUT)/streakd.1 "$(DESTDIR)$(MANDIR)/man1/streakd.1"
	$(INSTALL) -m 0644 $(OUT)/streakd.toml.5 "$(DESTDIR)$(MANDIR)/man5/streakd.toml.5"
	$(INSTALL) -m 0644 deploy/streakd.svg "$(DESTDIR)$(ICONDIR)/streakd.svg"
	$(INSTALL) -m 0644 $(OUT)/streakd.bash "$(DESTDIR)$(BASHCOMPDIR)/streakd"
	$(INSTALL) -m 0644 $(OUT)/_streakd "$(DESTDIR)$(ZSHCOMPDIR)/_streakd"
	$(INSTALL) -m 0644 $(OUT)/streakd.fish "$(DESTDIR)$(FISHCOMPDIR)/streakd.fish"
	$(INSTALL) -m 0644 deploy/streakd.toml.example deploy/dropins/network.conf deploy/dropins/postgres.conf deploy/streakd.rules.yml \
		"$(DESTDIR)$(DOCDIR)/"

install: install-common install-catalog
	$(INSTALL) -d "$(DESTDIR)$(SYSTEMDUNITDIR)"
	for u in $(UNITS); do \
		sed 's|@BINDIR@|$(BINDIR)|g' deploy/system/$$u >"$(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp" && \
		chmod 0644 "$(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp" && \
		mv -f "$(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp" "$(DESTDIR)$(SYSTEMDUNITDIR)/$$u" || exit 1; \
	done
ifneq ($(BOOTED),)
	systemctl daemon-reload
	@echo "streakd: installed; start the timers with: systemctl enable --now $(TIMERS)"
	@echo "streakd: the HTTP API (optional): systemctl enable --now streakd.socket"
endif

install-catalog:
	$(INSTALL) -d "$(DESTDIR)$(CATALOGDIR)"
	$(INSTALL) -m 0644 deploy/streakd.catalog "$(DESTDIR)$(CATALOGDIR)/streakd.catalog"
	journalctl $(if $(DESTDIR),--root="$(DESTDIR)") --update-catalog

install-user: install-common
	$(INSTALL) -d "$(DESTDIR)$(USERUNITDIR)"
	for u in $(UNITS); do \
		sed 's|@BINDIR@|$(BINDIR)|g' deploy/user/$$u >"$(DESTDIR)$(USERUNITDIR)/$$u.tmp" && \
		chmod 0644 "$(DESTDIR)$(USERUNITDIR)/$$u.tmp" && \
		mv -f "$(DESTDIR)$(USERUNITDIR)/$$u.tmp" "$(DESTDIR)$(USERUNITDIR)/$$u" || exit 1; \
	done
ifeq ($(DESTDIR),)
	-@systemctl --user daemon-reload 2>/dev/null || true
	@echo "streakd: installed for $$(id -un); start the timers with: systemctl --user enable --now $(TIMERS)"
	@echo "streakd: the HTTP API (optional): systemctl --user enable --now streakd.socket"
	@echo "streakd: the journal catalog needs root: sudo make install-catalog"
endif

uninstall-common:
	rm -f "$(DESTDIR)$(BINDIR)/streakd" "$(DESTDIR)$(MANDIR)/man1/streakd.1" \
		"$(DESTDIR)$(MANDIR)/man5/streakd.toml.5" "$(DESTDIR)$(ICONDIR)/streakd.svg" \
		"$(DESTDIR)$(BASHCOMPDIR)/streakd" "$(DESTDIR)$(ZSHCOMPDIR)/_streakd" \
		"$(DESTDIR)$(FISHCOMPDIR)/streakd.fish" \
		"$(DESTDIR)$(DOCDIR)/streakd.toml.example" "$(DESTDIR)$(DOCDIR)/network.conf" \
		"$(DESTDIR)$(DOCDIR)/postgres.conf" "$(DESTDIR)$(DOCDIR)/streakd.rules.yml"
	-rmdir "$(DESTDIR)$(DOCDIR)" 2>/dev/null || true

uninstall:
ifneq ($(BOOTED),)
	-systemctl disable --now $(TIMERS) $(API_UNITS)
endif
	$(MAKE) --no-print-directory uninstall-common P="$(SYSTEM_PREFIX)"
	for u in $(UNITS); do rm -f "$(DESTDIR)$(SYSTEMDUNITDIR)/$$u"; done
	rm -f "$(DESTDIR)$(CATALOGDIR)/streakd.catalog"
	journalctl $(if $(DESTDIR),--root="$(DESTDIR)") --update-catalog
ifneq ($(BOOTED),)
	systemctl daemon-reload
endif
	@echo "streakd: uninstalled; the store (/var/lib/private/streakd) and /etc/streakd are kept"

uninstall-user:
ifeq ($(DESTDIR),)
	-@systemctl --user disable --now $(TIMERS) $(API_UNITS) 2>/dev/null || true
endif
	$(MAKE) --no-print-directory uninstall-common P="$(USER_PREFIX)"
	for u in $(UNITS); do rm -f "$(DESTDIR)$(USERUNITDIR)/$$u"; done
ifeq ($(DESTDIR),)
	-@systemctl --user daemon-reload 2>/dev/null || true
endif
	@echo "streakd: uninstalled; the store (~/.local/state/streakd) and configuration are kept"

# The Debian package: `make install PREFIX=/usr` into a staging root, the user units beside
# the system ones, the catalog's database left to postinst (journalctl --update-catalog).
DEB_DIR ?= .build/deb
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB_ROOT = $(DEB_DIR)/root
DEB_FILE = $(DEB_DIR)/streakd_$(VERSION)_$(DEB_ARCH).deb
# dpkg-deb's options: the tests pass -Znone (a debug binary is large and xz slow).
DEB_FLAGS ?=
deb: build man completions
	rm -rf "$(DEB_ROOT)" && mkdir -p "$(DEB_ROOT)/DEBIAN"
	$(MAKE) --no-print-directory install PREFIX=/usr DESTDIR="$(abspath $(DEB_ROOT))" STREAKD="$(BIN)"
	rm -rf "$(DEB_ROOT)/var"
	$(INSTALL) -d "$(DEB_ROOT)/usr/lib/systemd/user"
	for u in $(UNITS); do \
		sed 's|@BINDIR@|/usr/bin|g' deploy/user/$$u >"$(DEB_ROOT)/usr/lib/systemd/user/$$u" && \
		chmod 0644 "$(DEB_ROOT)/usr/lib/systemd/user/$$u" || exit 1; \
	done
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@ARCH@|$(DEB_ARCH)|' \
		-e "s|@SIZE@|$$(du -sk --exclude=DEBIAN "$(DEB_ROOT)" | cut -f1)|" deploy/debian/control \
		>"$(DEB_ROOT)/DEBIAN/control"
	$(INSTALL) -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$(DEB_ROOT)/DEBIAN/"
	dpkg-deb --root-owner-group $(DEB_FLAGS) --build "$(DEB_ROOT)" "$(DEB_FILE)"

clean-deploy:
	rm -rf $(OUT)
