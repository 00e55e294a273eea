import json, torch
from executorch.examples.models.llama.model_args import ModelArgs
from executorch.examples.models.llama.llama_transformer import construct_transformer
torch.manual_seed(0)
p = json.load(open("/tmp/issue26/tiny_params.json"))
m = construct_transformer(ModelArgs(**p))
sd = {k: v for k, v in m.state_dict().items()}
print(len(sd), [k for k in sd][:8])
torch.save(sd, "/tmp/issue26/tiny_ckpt.pth")
