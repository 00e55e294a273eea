# 512-entry llama2c-format tokenizer.bin (vocab, bos, eos, max_len; then score,len,bytes); ASCII-only pieces.
import struct
toks = [b"<unk>", b"<s>", b"</s>"] + [bytes([c]) for c in range(32, 127)]
toks += [f"<t{i}>".encode() for i in range(len(toks), 512)]
with open("/tmp/issue26/tok512.bin", "wb") as f:
    f.write(struct.pack("IIII", 512, 1, 2, max(len(t) for t in toks)))
    for j, t in enumerate(toks): f.write(struct.pack("fI", -float(j), len(t))); f.write(t)
