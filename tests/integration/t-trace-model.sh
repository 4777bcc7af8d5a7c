#!/bin/bash
# The other models: torchaudio's wav2vec2 base traced and replayed on trixie
# and openreg (with cases past the replay's size), and sid's torchvision.
. "$(dirname "$0")/lib.sh"
plan 8
MODELS=$FIX/models

# a count the environment's own Python gives, for what the trace must say
count_in() {
	in_chroot "$1" python3 -c "$2" | tail -1
}

# every call: those of its cases, and those past --max-cases (the header's "over")
calls='import json,sys,collections; l=list(open(sys.argv[1])); n=collections.Counter(json.loads(l[0])["over"]); [n.update({r["api"]: r["count"]}) for r in map(json.loads, l[1:])]; print(" ".join("%s=%d" % (a, n[a]) for a in sys.argv[2:]))'
audio() {
	run 0 wav2vec2_forward_is_traced "$APIPARITY" trace --env trixie --out "$T/w2v" -- \
		python3 /dev/stdin < "$MODELS/wav2vec2_forward.py"
	layers=$(count_in trixie 'import torchaudio, torch; print(sum(isinstance(m, torch.nn.LayerNorm) for m in torchaudio.models.wav2vec2_base().modules()))')
	equals "$(py "$calls" "$T/w2v/cases.jsonl" torch.nn.functional.layer_norm)" "torch.nn.functional.layer_norm=$layers" \
		wav2vec2s_layer_norms_are_counted
	run 1 wav2vec2_replays "$APIPARITY" check --cases "$T/w2v/cases.jsonl" --env trixie \
		--env trixie-openreg --out "$T/wr" --timeout 5
	contains "$out" "torch\.Tensor\.size +trixie consistent: 4 PASS; trixie-openreg [a-z]+: [^;]*; 4 more not replayed: its tensors and those of the cases before it hold over 16 MiB" \
		cases_past_the_replays_size_are_not_replayed_and_say_why
	lacks "$out" "no verdict" every_replayed_api_has_a_verdict
}

sid_vision() {
	run 0 sids_torchvision_is_traced "$APIPARITY" trace --env sid --out "$T/sid" --max-cases 2 -- \
		python3 /dev/stdin < "$MODELS/resnet18_step.py"
	run 0 sids_cases_replay_on_sid "$APIPARITY" check --cases "$T/sid/cases.jsonl" --env sid --out "$T/sr" \
		torch.nn.functional.conv2d
	contains "$out" "torch\.nn\.functional\.conv2d +sid consistent: 2 PASS" sids_convolutions_pass
}

needs trixie trixie-openreg -- audio
needs sid -- sid_vision
done_testing
