#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install everything numaplace needs to build and test, with apt only.
# Idempotent; run as root. Called by `make deps`.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
conf="$top/tools/vm/kernels.conf"
build="${NP_BUILD:-$top/build}"
src_list=/etc/apt/sources.list.d/numaplace-backports.sources

die() { echo "deps: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (apt-get install)"

# bookworm-backports carries the 6.12.95 kernel; the file is ours alone.
if [ ! -f "$src_list" ]; then
	cat > "$src_list" <<'SRC'
# Added by numaplace (scripts/deps.sh): the 6.12.95 kernel from bookworm-backports.
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	fresh=1
fi

pkgs=(qemu-system-x86 busybox-static cpio libmnl-dev pkg-config pahole
      make gcc libc6-dev xz-utils libnuma-dev)
# bench/migratepages runs numactl's unmodified migratepages in the guest.
pkgs+=(numactl)
# make check-debug builds a kernel (tools/vm/debug-kernel).
pkgs+=(flex bison bc libelf-dev libssl-dev)
# The kernels of other Debian releases (scripts/kernel-fetch) and their
# build roots (below).
pkgs+=(debootstrap file)
# make deb (debian/) and its install check (scripts/deb-check; its
# systemd-analyze verify of the tiering daemon's unit).
pkgs+=(dpkg-dev debhelper dh-dkms dkms systemd)
# The kernel's netlink code generator (ynl-gen-c.py, make genl-gen and
# make check's genl-check) and the JSON schema check of the spec.
pkgs+=(python3 python3-yaml python3-jsonschema)
# The kselftest collection's install (lib.mk copies with rsync).
pkgs+=(rsync)
# Kernels of the host's own release are installed (a "build" kernel needs
# only its headers); the others are fetched and unpacked under build/.
host_codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
fetch=()
while read -r short abi suite role _; do
	case "$short" in ''|\#*) continue ;; esac
	if [ "${suite%%-*}" != "$host_codename" ]; then
		fetch+=("$abi")
		continue
	fi
	pkgs+=("linux-headers-$abi")
	[ "$role" = test ] && pkgs+=("linux-image-$abi")
done < "$conf"

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
need_src=0
[ -f "$build/ksft/kselftest_harness.h" ] && [ -f "$build/ksft/lib.mk" ] &&
	[ -f "$build/checkpatch/checkpatch.pl" ] || need_src=1
# ynl-gen-c.py: 6.1's tree has none, 6.12's has (tools/net/ynl/ynl-gen-c.py;
# later trees moved it to tools/net/ynl/pyynl/, with other output).
ynl_src=linux-source-6.12
need_ynl=0
[ -f "$build/ynl/tools/net/ynl/ynl-gen-c.py" ] || need_ynl=1

if [ ${#missing[@]} -gt 0 ] || [ "$need_src" = 1 ] || [ "$need_ynl" = 1 ] ||
   [ "${fresh:-0}" = 1 ]; then
	apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi

# kselftest_harness.h and kselftest.h, the collections' lib.mk and the
# installed tree's run_kselftest.sh with its kselftest/ runner (selftests/
# Makefile), and checkpatch.pl (for `make checkpatch`) come from Debian's
# linux-source-6.1, extracted into the build directory (never into the
# repository), laid out as tools/testing/selftests is.
if [ "$need_src" = 1 ]; then
	tmp=$(mktemp -d)
	chmod 755 "$tmp" # apt-get download runs as _apt
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -qq linux-source-6.1) ||
		die "apt-get download linux-source-6.1 failed"
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.1_*.deb |
		tar -x -C "$tmp" --wildcards './usr/src/linux-source-6.1.tar.xz'
	mkdir -p "$build/ksft/kselftest" "$build/checkpatch"
	src=linux-source-6.1
	ksft=$src/tools/testing/selftests
	tar -xJf "$tmp/usr/src/$src.tar.xz" -C "$tmp" \
		$ksft/kselftest.h $ksft/kselftest_harness.h $ksft/lib.mk \
		$ksft/run_kselftest.sh $ksft/kselftest \
		$src/scripts/checkpatch.pl $src/scripts/spelling.txt \
		$src/scripts/const_structs.checkpatch $src/.clang-format
	cp "$tmp"/$ksft/kselftest*.h "$tmp"/$ksft/lib.mk "$tmp"/$ksft/run_kselftest.sh \
		"$build/ksft/"
	cp "$tmp"/$ksft/kselftest/* "$build/ksft/kselftest/"
	cp "$tmp"/$src/scripts/{checkpatch.pl,spelling.txt,const_structs.checkpatch} \
		"$tmp/$src/.clang-format" "$build/checkpatch/"
	echo "deps: kselftest headers, lib.mk and runner in $build/ksft, checkpatch in $build/checkpatch"
fi
# ynl-gen-c.py, its lib/ and the genetlink JSON schemas, from Debian's
# linux-source-6.12, into build/ynl laid out as a kernel tree: the
# generator reads the schema next to the spec's directory and names the
# spec relative to the tree's root (the one with a MAINTAINERS).
if [ "$need_ynl" = 1 ]; then
	tmp_ynl=$(mktemp -d)
	chmod 755 "$tmp_ynl" # apt-get download runs as _apt
	(cd "$tmp_ynl" && apt-get download -qq $ynl_src) ||
		{ rm -rf "$tmp_ynl"; die "apt-get download $ynl_src failed"; }
	dpkg-deb --fsys-tarfile "$tmp_ynl"/${ynl_src}_*.deb |
		tar -x -C "$tmp_ynl" --wildcards "./usr/src/$ynl_src.tar.xz"
	tar -xJf "$tmp_ynl/usr/src/$ynl_src.tar.xz" -C "$tmp_ynl" \
		$ynl_src/tools/net/ynl/ynl-gen-c.py $ynl_src/tools/net/ynl/lib \
		$ynl_src/Documentation/netlink/genetlink.yaml \
		$ynl_src/Documentation/netlink/genetlink-c.yaml \
		$ynl_src/Documentation/netlink/genetlink-legacy.yaml
	rm -rf "$build/ynl"
	mkdir -p "$build/ynl.tmp/tools/net/ynl" "$build/ynl.tmp/Documentation/netlink/specs"
	cp -r "$tmp_ynl"/$ynl_src/tools/net/ynl/ynl-gen-c.py \
		"$tmp_ynl"/$ynl_src/tools/net/ynl/lib "$build/ynl.tmp/tools/net/ynl/"
	cp "$tmp_ynl"/$ynl_src/Documentation/netlink/genetlink*.yaml \
		"$build/ynl.tmp/Documentation/netlink/"
	: > "$build/ynl.tmp/MAINTAINERS"
	ls "$tmp_ynl"/${ynl_src}_*.deb | sed 's|.*/||' > "$build/ynl.tmp/SOURCE"
	rm -rf "$tmp_ynl"
	mv "$build/ynl.tmp" "$build/ynl"
	echo "deps: ynl-gen-c.py ($(cat "$build/ynl/SOURCE")) in $build/ynl"
fi
# Debian 13 and unstable kernels: image, modules and headers unpacked
# under build/kernels (never installed into this host).
if [ ${#fetch[@]} -gt 0 ]; then
	"$top/scripts/kernel-fetch" "${fetch[@]}" ||
		die "fetching ${fetch[*]} failed: run 'scripts/kernel-fetch ${fetch[*]}'"
fi

# A build root per compiler that the kernels' headers name and the host
# lacks (Debian 13's gcc-14, unstable's gcc-16): debootstrap from Debian's
# archive, once (cached; a failed one is started again from nothing).
declare -A roots=()
while read -r short _; do
	case "$short" in ''|\#*) continue ;; esac
	eval "$("$top/scripts/kernel-env" "$short")"
	[ -f "$kdir/include/config/auto.conf" ] ||
		die "no headers for $short in $kdir: run 'make deps'"
	[ -n "$buildroot" ] || continue
	[ -n "$buildroot_suite" ] ||
		die "$short's headers name $gcc, which no known Debian build root has (scripts/kernel-env)"
	roots[$buildroot]="$buildroot_suite gcc-$gcc_major"
done < "$conf"
for r in "${!roots[@]}"; do
	[ -f "$r/.np-ready" ] && continue
	read -r suite gcc <<< "${roots[$r]}"
	echo "deps: build root $r ($suite, $gcc): debootstrap"
	rm -rf "$r.tmp"
	mkdir -p "$(dirname "$r")"
	start=$(date +%s)
	debootstrap --variant=buildd --include="$gcc,make,bc,libelf-dev,pahole,kmod" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$suite" "$r.tmp" http://deb.debian.org/debian > "$r.log" 2>&1 ||
		die "debootstrap $suite into $r.tmp failed (log: $r.log): run 'make deps' again"
	rm -rf "$r"
	mv "$r.tmp" "$r"
	echo "$suite $gcc" > "$r/.np-ready"
	echo "deps: build root $r ready in $(( $(date +%s) - start ))s"
done
echo "deps: ok"
