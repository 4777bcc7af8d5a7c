#!/bin/bash
# The numeric comparator (src/check/compare.c) against torch itself: random
# pairs of every floating dtype, around the tolerance bound and with NaN,
# +-Inf and -0.0 among them, judged by torch.isclose with assert_close's
# default tolerances in trixie (torch 2.6) and by apiparity; the verdicts
# must agree except within torch's rounding of the bound in the dtype.
. "$(dirname "$0")/lib.sh"
plan 2
AGREE=$(dirname "$APIPARITY")/tests/compare-agree

# The pairs go to fd 3: torch may log to stdout when /proc is missing.
gen='import os, sys, torch
from torch.testing._comparison import default_tolerances
torch.manual_seed(11)
out = os.fdopen(3, "wb")
n = 20000
for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64,
           torch.complex64, torch.complex128):
    rtol, atol = default_tolerances(dt)
    real = torch.float64 if not dt.is_complex else torch.complex128
    e = torch.randn(n, dtype=real) * 10 ** (torch.rand(n, dtype=torch.float64) * 8 - 5)
    e = e.to(dt).to(real)
    mag = e.abs()
    allowed = atol + rtol * mag
    f = torch.rand(n, dtype=torch.float64) * 2
    if dt.is_complex:
        ph = torch.polar(torch.ones(n, dtype=torch.float64), torch.rand(n, dtype=torch.float64) * 6.3)
    else:
        ph = torch.where(torch.rand(n) < 0.5, -1.0, 1.0).to(torch.float64)
    a = (e + ph * allowed * f).to(dt)
    e = e.to(dt)
    s = torch.arange(n)
    a[s % 97 == 1], e[s % 97 == 1] = float("nan"), float("nan")
    a[s % 97 == 2] = float("nan")
    e[s % 97 == 3] = float("nan")
    a[s % 97 == 4], e[s % 97 == 4] = float("inf"), float("inf")
    a[s % 97 == 5], e[s % 97 == 5] = float("inf"), float("-inf")
    a[s % 97 == 6], e[s % 97 == 6] = -0.0, 0.0
    a[s % 97 == 7] = e[s % 97 == 7]
    a[s % 97 == 8], e[s % 97 == 8] = float("inf"), 1e3
    mism = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    # how far from the bound, in double, from the values as stored
    d = (a.to(real) - e.to(real)).abs()
    bound = atol + rtol * e.to(real).abs()
    eps = torch.finfo(a.real.dtype if dt.is_complex else dt).eps
    # torch evaluates the bound in the dtype: float16 rounds atol (1e-5, a
    # subnormal there) by up to 0.6%
    win = (8 if dt == torch.float16 else 2) * eps
    near = torch.isfinite(d) & ((d - bound).abs() <= win * bound)
    v = bytearray(49 if m else 48 for m in mism.tolist())
    for i in near.nonzero().flatten().tolist():
        v[i] = ord(".")
    out.write(b"%s %d\n" % (str(dt).split(".")[1].encode(), n))
    out.write(a.numpy().tobytes() if dt != torch.bfloat16 else a.view(torch.int16).numpy().tobytes())
    out.write(e.numpy().tobytes() if dt != torch.bfloat16 else e.view(torch.int16).numpy().tobytes())
    out.write(bytes(v))
'

agrees() {
	in_chroot trixie python3 -c "$gen" 3> "$T/pairs" > /dev/null
	run 0 apiparity_agrees_with_torch_isclose_on_every_floating_dtype "$AGREE" < "$T/pairs"
	contains "$out" "^complex128: 20000 pairs, [0-9]+ mismatches \(torch: [0-9]+\), [0-9]+ near the bound, 0 disagreements" \
		every_dtype_was_compared
}
needs trixie -- agrees
done_testing
