#!/bin/bash
# t0200-install.t - `cmake --install` of this build (README "Install"), staged with DESTDIR:
# the programs, headers, libraries, pkg-config file, plugins and documents land where the
# README says; every program and the .pc report the project's one version; a client built
# the way a site builds one (pkg-config against the installed liballot.so, and against
# liballot.a with the .pc's private libraries) runs against a real allotd.
test_description='install tree, pkg-config and a client built against it'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

cache=$ALLOT_BUILD_DIR/CMakeCache.txt
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
version=$(cache_get CMAKE_PROJECT_VERSION)
prefix=$(cache_get CMAKE_INSTALL_PREFIX)
libdir=$(cache_get CMAKE_INSTALL_LIBDIR)
# The stage lives outside the trash directory, whose name has a space that pkg-config's
# flags could not carry through the shell's word splitting.  Removed when every test
# passed (sharness' cleanup), kept for a look when one failed, as the trash directory is.
stage=$(mktemp -d /tmp/allot-install-XXXXXX) || exit 1
root=$stage$prefix
cleanup "rm -rf \"$stage\""
# A sanitizer build's libraries need the sanitizer runtime in the program that loads them.
sanflags=
grep -q '^ALLOT_SANITIZE:BOOL=ON' "$cache" && sanflags="-fsanitize=address,undefined"

test_expect_success 'cmake --install with DESTDIR stages the whole tree' '
	test -n "$version" && test -n "$prefix" && test -n "$libdir" &&
	DESTDIR=$stage cmake --install "$ALLOT_BUILD_DIR" >install.log &&
	for f in bin/allot sbin/allotd sbin/allot-agent libexec/allot/allot-step; do
		test -x "$root/$f" || { echo "missing program $f"; return 1; }
	done &&
	for f in include/allot/allot.h include/allot/error.h \
		"$libdir/liballot.a" "$libdir/liballot.so.$version" "$libdir/pkgconfig/allot.pc" \
		share/doc/allot/allot.conf.example share/doc/allot/openapi.yaml; do
		test -f "$root/$f" || { echo "missing file $f"; return 1; }
	done &&
	test "$(readlink "$root/$libdir/liballot.so")" = liballot.so.0 &&
	test "$(readlink "$root/$libdir/liballot.so.0")" = "liballot.so.$version" &&
	readelf -d "$root/$libdir/liballot.so.$version" | grep "SONAME.*\[liballot\.so\.0\]"
'
test_expect_success 'the Slurm plugins built are installed beside liballot' '
	n=0 &&
	for p in "$ALLOT_BUILD_DIR"/plugins/*.so; do
		test -e "$p" || continue
		test -f "$root/$libdir/allot/slurm/$(basename "$p")" || { echo "missing $p"; return 1; }
		n=$((n + 1))
	done &&
	echo "$n plugins installed" &&
	test "$(ls "$root/$libdir/allot/slurm" 2>/dev/null | wc -l)" = "$n"
'
test_expect_success 'installed programs and plugins find every library they need' '
	for f in bin/allot sbin/allotd sbin/allot-agent libexec/allot/allot-step; do
		! readelf -d "$root/$f" | grep -E "R(UN)?PATH" || return 1
		ldd "$root/$f" >ldd.out && ! grep "not found" ldd.out || return 1
	done &&
	for p in "$root/$libdir"/allot/slurm/*.so; do
		test -e "$p" || continue
		# Found through the plugin own RUNPATH ($ORIGIN/../..), never the build tree.
		readelf -d "$p" | grep "RUNPATH.*\[\$ORIGIN/\.\./\.\.\]" &&
		ldd "$p" >ldd.out && ! grep "not found" ldd.out &&
		found=$(sed -n "s/.*liballot\.so\.0 => \([^ ]*\) .*/\1/p" ldd.out) &&
		test "$(realpath "$found")" = "$(realpath "$root/$libdir/liballot.so.$version")" || return 1
	done
'
test_expect_success 'every program, the library and allot.pc report the one version' '
	test "$(LD_LIBRARY_PATH=$root/$libdir "$root/bin/allot" --version)" = "allot $version" &&
	test "$("$root/sbin/allotd" --version)" = "allotd $version" &&
	test "$(LD_LIBRARY_PATH=$root/$libdir "$root/sbin/allot-agent" --version)" = "allot-agent $version" &&
	test "$(PKG_CONFIG_PATH=$root/$libdir/pkgconfig pkg-config --modversion allot)" = "$version"
'
test_expect_success 'allot.pc points at the staged headers and libraries' '
	export PKG_CONFIG_PATH=$root/$libdir/pkgconfig &&
	inc=$(pkg-config --variable=includedir allot) &&
	lib=$(pkg-config --variable=libdir allot) &&
	test "$(realpath "$inc")" = "$(realpath "$root/include")" &&
	test "$(realpath "$lib")" = "$(realpath "$root/$libdir")" &&
	pkg-config --cflags allot | grep -e "-I$inc" &&
	pkg-config --libs allot | grep -e "-L$lib -lallot"
'
test_expect_success 'start allotd' '
	allotd_start AuthType=none TestMode=local
'
test_expect_success 'a client built with pkg-config against liballot.so talks to allotd' '
	export PKG_CONFIG_PATH=$root/$libdir/pkgconfig &&
	cc -std=c17 -Wall -Werror $sanflags $(pkg-config --cflags allot) \
		"$ALLOT_SRC_DIR/tests/lib/installed_client.c" -o client_shared $(pkg-config --libs allot) &&
	LD_LIBRARY_PATH=$root/$libdir ldd client_shared | grep "liballot\.so\.0 => $root/$libdir/" &&
	LD_LIBRARY_PATH=$root/$libdir ./client_shared "$ALLOTD_URL" root >out &&
	cat out &&
	test "$(sed -n 1p out)" = "version $version" &&
	test "$(sed -n 2p out)" = "status 200" &&
	test "$(sed -n 3p out | json_get user)" = root
'
test_expect_success 'a client linked with liballot.a and the private libraries allot.pc names' '
	export PKG_CONFIG_PATH=$root/$libdir/pkgconfig &&
	private=$(sed -n "s/^Libs.private: //p" "$PKG_CONFIG_PATH/allot.pc") &&
	requires=$(sed -n "s/^Requires.private: //p" "$PKG_CONFIG_PATH/allot.pc") &&
	cc -std=c17 -Wall -Werror $sanflags $(pkg-config --cflags allot) \
		"$ALLOT_SRC_DIR/tests/lib/installed_client.c" -o client_static \
		"$root/$libdir/liballot.a" $(pkg-config --libs $requires) $private &&
	! ldd client_static | grep liballot &&
	# liballot.a defines, globally, exactly the names liballot.so exports.
	nm -g --defined-only "$root/$libdir/liballot.a" | sed -n "s/^[0-9a-f]* [A-Z] //p" | sort >a.syms &&
	nm -D --defined-only "$root/$libdir/liballot.so.$version" | sed -n "s/^[0-9a-f]* [A-Z] //p" |
		sort >so.syms &&
	test_cmp so.syms a.syms &&
	grep "^allot_request$" a.syms &&
	./client_static "unix:$ALLOTD_SOCKET" root >out &&
	test "$(sed -n 2p out)" = "status 200" &&
	test "$(sed -n 3p out | json_get role)" = superuser
'
test_expect_success 'stop allotd' '
	allotd_stop
'
test_done
