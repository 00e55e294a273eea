import sys, json
import executorch.kernels.quantized  # registers quantized_decomposed::* runtime kernels
from executorch.extension.llm.custom_ops import custom_ops  # registers llama::* runtime kernels
from executorch.extension.llm.runner import TextLLMRunner, MultimodalRunner, GenerationConfig, make_token_input
r = TextLLMRunner(sys.argv[1], "/tmp/issue26/tok512.bin")
cfg = GenerationConfig(echo=False, max_new_tokens=32, temperature=0.0, seq_len=64)
out = []; st = {}
r.generate("hello world", cfg, token_callback=lambda s: out.append(s), stats_callback=lambda s: st.update(json.loads(s.to_json_string())))
print("pieces:", len(out)); print(json.dumps(st))
print("decode_token_per_sec", st["decode_token_per_sec"], "prefill_token_per_sec", st["prefill_token_per_sec"])
try:
    m = MultimodalRunner(sys.argv[1], "/tmp/issue26/tok512.bin")
    m.generate([make_token_input([1, 5, 6, 7])], cfg, token_callback=lambda s: None, stats_callback=None)
    print("MultimodalRunner with token input: OK")
except Exception as e:
    print("MultimodalRunner:", type(e).__name__, e)
