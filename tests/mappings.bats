#!/usr/bin/env bats
# Unusual mappings: the [vdso] image's build-id in pfdump --build-ids.
load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "pfdump --build-ids lists [vdso] with the build-id of the recorded image, as readelf reads it from the live vDSO" {
	[ -r /proc/self/mem ] || skip "/proc/self/mem is not readable"
	pfrec -q -g -F 1000 -o r.pf -- sleep 0.2
	# the vDSO of this kernel, copied from a live process (python3: its own)
	python3 - <<'PY'
for l in open('/proc/self/maps'):
    if l.rstrip().endswith('[vdso]'):
        a, b = (int(x, 16) for x in l.split()[0].split('-'))
        with open('/proc/self/mem', 'rb') as m:
            m.seek(a)
            open('vdso.so', 'wb').write(m.read(b - a))
PY
	bid=$(readelf -n vdso.so | awk '/Build ID/ { print $3 }')
	[ -n "$bid" ] || skip "this kernel's vDSO has no build-id"
	run pfdump --build-ids r.pf
	assert_success
	assert_line "$bid [vdso]"
	assert_equal "$(grep -c '\[vdso\]$' <<<"$output")" 1
}
