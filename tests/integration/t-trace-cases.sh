#!/bin/bash
# apiparity trace on a model nobody here wrote (torchvision's resnet18 from
# Debian, random weights): the APIs a training step calls, their counts and
# cases read against the environment's own Python, the summary; and programs
# that crash, hang, never touch torch or cannot start. The replays:
# t-trace-replay and t-trace-model.
. "$(dirname "$0")/lib.sh"
plan 31
MODELS=$FIX/models

# a count the environment's own Python gives, for what the trace must say
count_in() {
	in_chroot "$1" python3 -c "$2" | tail -1
}

resnet() {
	run 0 resnet18_step_is_traced "$APIPARITY" trace --env trixie --out "$T/rn" -- \
		python3 /dev/stdin < "$MODELS/resnet18_step.py"
	contains "$out" "^loss [0-9.]+$" the_programs_own_stdout_is_passed_on
	c=$T/rn/cases.jsonl
	equals "$(py 'import json,sys; h=json.loads(open(sys.argv[1]).readline()); print(h["format"], h["returncode"], h["torch"], h["fingerprint"]["torch"]["version"][:3])' "$c")" \
		"apiparity-cases/1 0 True 2.6" the_header_names_the_format_the_exit_and_the_fingerprint
	# every call: those of its cases, and those past --max-cases (the header's "over")
	calls='import json,sys,collections; l=list(open(sys.argv[1])); n=collections.Counter(json.loads(l[0])["over"]); [n.update({r["api"]: r["count"]}) for r in map(json.loads, l[1:])]; print(" ".join("%s=%d" % (a, n[a]) for a in sys.argv[2:]))'
	convs=$(count_in trixie 'import torchvision, torch; print(sum(isinstance(m, torch.nn.Conv2d) for m in torchvision.models.resnet18().modules()))')
	equals "$(py "$calls" "$c" torch.nn.functional.conv2d torch.nn.functional.batch_norm torch.nn.functional.max_pool2d torch.nn.functional.adaptive_avg_pool2d torch.nn.functional.linear torch.nn.functional.cross_entropy)" \
		"torch.nn.functional.conv2d=$convs torch.nn.functional.batch_norm=$convs torch.nn.functional.max_pool2d=1 torch.nn.functional.adaptive_avg_pool2d=1 torch.nn.functional.linear=1 torch.nn.functional.cross_entropy=1" \
		each_call_is_counted_as_the_model_makes_it
	# resnet18's convolutions: one per distinct shape, at most --max-cases (8)
	shapes=$(count_in trixie 'import torchvision, torch
seen = set()
m = torchvision.models.resnet18(num_classes=10)
hook = lambda mod, a: seen.add((tuple(a[0].shape), tuple(mod.weight.shape), mod.stride, mod.padding))
[x.register_forward_pre_hook(hook) for x in m.modules() if isinstance(x, torch.nn.Conv2d)]
m(torch.randn(2, 3, 64, 64)); print(min(len(seen), 8))')
	equals "$(py 'import json,sys; print(sum(1 for r in map(json.loads, list(open(sys.argv[1]))[1:]) if r["api"] == "torch.nn.functional.conv2d"))' "$c")" \
		"$shapes" identical_calls_are_one_case_and_distinct_shapes_each_theirs
	equals "$(py 'import json,sys; r=[r for r in map(json.loads, list(open(sys.argv[1]))[1:]) if r["api"] == "torch.nn.functional.conv2d"][0]; d=r["args"][0]["$desc"]; print(d["dtype"], d["shape"], d["strides"], d["requires_grad"], r["args"][1]["$desc"]["shape"], "aten.convolution.default" in r["aten"])' "$c")" \
		"float32 [2, 3, 64, 64] [12288, 4096, 64, 1] False [64, 3, 7, 7] True" the_first_convolution_is_described_with_its_aten_operator
	run 0 summary_reads_the_trace "$APIPARITY" trace --summary "$c"
	contains "$out" "^ +$convs +[0-9]+  torch\.nn\.functional\.conv2d +function +float32 +\[2,3,64,64\] \[64,3,7,7\]$" summary_lists_conv2d_with_its_counts_dtypes_and_shapes
}

ends() {
	printf 'import torch, os\nx = torch.ones(3) + 1\nprint(x.sum().item(), flush=True)\nos.abort()\n' > "$T/crash.py"
	run 1 a_crash_keeps_its_cases "$APIPARITY" trace --env trixie --out "$T/cr" -- python3 /dev/stdin < "$T/crash.py"
	contains "$err" "the program was killed by signal 6; its [0-9]+ cases are kept" the_crash_is_said
	equals "$(py 'import json,sys; print(sorted(set(r["api"] for r in map(json.loads, list(open(sys.argv[1]))[1:]))))' "$T/cr/cases.jsonl")" \
		"['torch.Tensor.add', 'torch.Tensor.item', 'torch.Tensor.sum', 'torch.ones']" the_calls_before_the_crash_are_kept
	printf 'import torch, time\ntorch.ones(2).neg()\nprint("waiting", flush=True)\ntime.sleep(60)\n' > "$T/hang.py"
	run 9 a_program_past_its_limit_is_stopped "$APIPARITY" trace --env trixie --out "$T/hg" --limit-seconds 8 -- \
		python3 /dev/stdin < "$T/hang.py"
	equals "$(py 'import json,sys; l=list(open(sys.argv[1])); h=json.loads(l[0]); print(h["limited"], [json.loads(r)["api"] for r in l[1:]])' "$T/hg/cases.jsonl")" \
		"True ['torch.ones', 'torch.Tensor.neg']" the_stopped_programs_cases_are_kept
	run 0 no_torch_is_an_empty_trace "$APIPARITY" trace --env trixie --out "$T/nt" -- python3 -c 'print(42)'
	contains "$err" "the program never imported torch: the trace is empty" no_torch_is_said
	run 6 a_program_that_is_not_there "$APIPARITY" trace --env trixie --out "$T/nx" -- /no/such/program
}

# bad input: a clear line and its exit code, nothing run
inputs() {
	run 2 no_program_after_the_dashes "$APIPARITY" trace --env trixie
	contains "$err" "name the program after --" says_where_the_program_goes
	run 2 a_program_without_dashes "$APIPARITY" trace --env trixie python3 x.py
	run 2 no_environment "$APIPARITY" trace -- python3 x.py
	run 5 an_unknown_environment "$APIPARITY" trace --env nowhere -- python3 x.py
	run 2 summary_runs_nothing "$APIPARITY" trace --summary x -- python3 x.py
	run 2 max_cases_is_a_count "$APIPARITY" trace --env trixie --max-cases 0 -- python3 x.py
	printf '{"format":"apiparity-cases/1","command":[],"returncode":0,"over":{},"fingerprint":null}\n{"id":0,"api":"torch.add\\nx","kind":"function","count":1,"args":[],"kwargs":{}}\n' > "$T/bad.jsonl"
	run 4 a_case_with_a_control_byte_is_refused "$APIPARITY" trace --summary "$T/bad.jsonl"
	contains "$err" "bad\.jsonl:2: not a case of this trace" says_which_line
	run 4 check_refuses_it_too "$APIPARITY" check --cases "$T/bad.jsonl" --env trixie --out "$T/bc"
	run 4 a_directory_is_not_a_trace "$APIPARITY" trace --summary "$T"
	: > "$T/empty.jsonl"
	run 4 an_empty_file_is_not_a_trace "$APIPARITY" check --cases "$T/empty.jsonl" --env trixie --out "$T/be"
	head -1 "$T/bad.jsonl" > "$T/none.jsonl"
	run 0 a_trace_of_no_case_is_read "$APIPARITY" trace --summary "$T/none.jsonl"
	contains "$out" "never imported torch" a_trace_without_torch_says_so
	run 2 an_api_the_trace_never_called "$APIPARITY" check --cases "$T/none.jsonl" torch.add --env trixie --out "$T/bn"
}

needs trixie -- resnet
needs trixie -- ends
inputs
done_testing
