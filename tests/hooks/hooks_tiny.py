"""Tiny models for the hook tests, built from configs in code (no downloads, a few ms each)."""
from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

from callgraph.model import Proof, Verdict

N_LAYERS = 8
HIDDEN = 16


def llama_config(layers: int = N_LAYERS):
    from transformers import LlamaConfig
    return LlamaConfig(vocab_size=64, hidden_size=HIDDEN, intermediate_size=32,
                       num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
                       max_position_embeddings=64, tie_word_embeddings=False)


def llama(seed: int = 0):
    from transformers import LlamaForCausalLM
    torch.manual_seed(seed)
    return LlamaForCausalLM(llama_config()).eval()


def llava(seed: int = 0):
    from transformers import CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration
    torch.manual_seed(seed)
    vision = CLIPVisionConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                              num_attention_heads=2, image_size=8, patch_size=4)
    cfg = LlavaConfig(text_config=llama_config().to_dict(), vision_config=vision.to_dict(),
                      image_token_id=63)
    return LlavaForConditionalGeneration(cfg).eval()


def proof(entry_cls: str, target_cls: str, chain: tuple[str, ...]) -> Proof:
    return Proof(Verdict.REACHED, f"pkg.mod.{entry_cls}.forward", f"pkg.mod.{target_cls}.forward",
                 ("/src",), "test", attribute_chain=chain)


def samples(n: int, seed: int = 0, lo: int = 3, hi: int = 12):
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        t = int(torch.randint(lo, hi + 1, (1,), generator=g))
        ids = torch.randint(0, 60, (t,), generator=g).tolist()
        mask = [0] * (t // 3) + [1] * (t - t // 3)
        out.append((i, ids, mask))
    return out


def write_jsonl(path: Path, rows) -> Path:
    with open(path, "w") as f:
        for _, ids, mask in rows:
            f.write(json.dumps({"input_ids": ids, "loss_mask": mask}) + "\n")
    return path


def reference(model, rows, batch_size=3):
    """Independent reference: HF's own output_hidden_states, on the same padded batches.

    hidden_states[0] is the embedding output, hidden_states[L + 1] the output of layer L for
    L < N - 1, and (in transformers 5) the last entry is the final norm's output. Returns
    {sample id: [hidden_states[i][b, :length] for each i]}.
    """
    from callgraph.hooks.data import batches

    out = {}
    with torch.no_grad():
        for b in batches(rows, batch_size):
            hs = model(input_ids=b.input_ids, attention_mask=b.attention_mask,
                       output_hidden_states=True).hidden_states
            for i, (sid, n) in enumerate(zip(b.ids, b.lengths)):
                out[sid] = [h[i, :n] for h in hs]
    return out


# ---- an SGLang-style module tree: layers return (hidden_states, residual) ----------------------
class FusedNorm(nn.Module):
    """RMSNorm(x, residual) -> (norm(x + residual), x + residual), like SGLang's fused add-norm."""

    def __init__(self, h):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(h) + 0.5)

    def forward(self, x, residual=None):
        if residual is not None:
            x = x + residual
            residual = x
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return y if residual is None else (y, residual)


class PairLayer(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.input_layernorm = FusedNorm(h)
        self.mlp = nn.Linear(h, h)

    def forward(self, positions, hidden_states, residual):
        if residual is None:
            residual = hidden_states
            hidden_states = self.input_layernorm(hidden_states)
        else:
            hidden_states, residual = self.input_layernorm(hidden_states, residual)
        return self.mlp(hidden_states), residual


class PairModel(nn.Module):
    """Packed tokens [sum T, H], as SGLang runs a batch."""

    def __init__(self, n=N_LAYERS, h=HIDDEN):
        super().__init__()
        self.embed_tokens = nn.Embedding(64, h)
        self.layers = nn.ModuleList(PairLayer(h) for _ in range(n))
        self.norm = FusedNorm(h)
        self.streams = []   # the true residual stream after each layer, for the test

    def forward(self, input_ids, positions=None):
        hidden, residual = self.embed_tokens(input_ids), None
        self.streams = []
        for layer in self.layers:
            hidden, residual = layer(positions, hidden, residual)
            self.streams.append((hidden + residual).detach().clone())
        hidden, _ = self.norm(hidden, residual)
        return hidden


class PairForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.model = PairModel()

    def forward(self, input_ids):
        return self.model(input_ids)


def dump(model, rows, out_dir, layers="1,3,5", convention="output", batch_size=3,
         call=None, **kw):
    """Run `Capture` over rows the way `callgraph dump` does (right-padded batches)."""
    from callgraph.hooks import Capture
    from callgraph.hooks.data import batches

    call = call or (lambda m, b: m(input_ids=b.input_ids, attention_mask=b.attention_mask))
    with Capture(model, layers, convention, out_dir=out_dir, **kw) as cap:
        todo = [r for r in rows if r[0] not in cap.done_ids]
        with torch.no_grad():
            for b in batches(todo, batch_size):
                with cap.batch(b.ids, b.input_ids, b.loss_mask, b.lengths):
                    call(model, b)
    return cap
