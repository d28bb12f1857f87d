"""The batched engine's inside: R runs of the recall model, stacked, one step at a time.

:func:`helpers.recall_runs.train_recall_runs` keeps one :class:`RunStack` per d_k. With ``E`` the key embeddings
stacked on the value embeddings, (R, V, D) with ``V = n_keys + n_values`` (row ``n_keys + j`` is value ``j``), the
forward pass computes :class:`helpers.RecallModel`'s function in a cheaper order::

    q       = W_q key_embedding[query]                         # (R, B, d_k)
    u       = W_kᵀ q                                           # (R, B, D)   q·(W_k m) = (W_kᵀ q)·m
    s       = u Eᵀ                                             # (R, B, V)   u·e for every row e of E
    scores  = scale · (s[pair_key] + s[n_keys + pair_value]) / sqrt(2)     # (R, B, P) = scale · q·k
    weights = softmax(scores)                                  # (R, B, P)
    mass    = Σ_p weights_p (onehot(pair_key_p) + onehot(n_keys + pair_value_p)) / sqrt(2)   # (R, B, V)
    output  = W_v (mass E)                                     # (R, B, D)   = Σ_p weights_p W_v m_p
    logits  = readout(output)                                  # (R, B, n_values)

By linearity, this order multiplies one vector per example by ``W_k`` and by ``W_v`` (the model: all P memory rows):
six times fewer multiply–adds at P = 16, D = d_k = V = 64. The backward pass is the chain rule through these lines,
written out; the update is torch's SGD step or fused Adam kernel, once per block of runs that share a learning rate.
"""

from __future__ import annotations

import math
from functools import partial

import torch
from torch import Tensor
from torch.nn import functional as F

from helpers.training import RecallBatch

__all__ = ["RunStack", "StackedAdam", "StackedSGD", "step_statistics"]

# torch's fused Adam kernel with torch.optim.Adam's defaults, as torch.optim.Adam(fused=True) calls it
_fused_adam = partial(
    torch._fused_adam_, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False
)
_NAMES = ("embedding", "w_q", "w_k", "w_v", "readout.weight", "readout.bias")  # the stacked parameters, in order


class RunStack:
    """The runs of one d_k: parameters, gradients and optimizer state, stacked along a run axis.

    Each parameter is a contiguous (R, ...) block of one flat buffer: ``embedding`` E (R, V, D), then
    ``RecallModel``'s ``w_q`` (R, d_k, D), ``w_k``, ``w_v`` (R, D, D), ``readout.weight`` (R, n_values, D) and
    ``readout.bias`` (R, n_values).
    """

    def __init__(
        self,
        runs: list[int],
        states: list[dict[str, Tensor]],
        scales: list[float],
        lrs: list[float],
        seed_slots: list[int],
        optimizer: str,
        steps: int,
        device: torch.device,
        learns: list[bool],
    ) -> None:
        self.runs = runs  # the indices of these runs in the caller's order

        def stacked(name: str) -> Tensor:  # E: each run's key embeddings on its value embeddings
            if name == "embedding":
                return torch.stack(
                    [torch.cat([s["key_embedding.weight"], s["value_embedding.weight"]]) for s in states]
                )
            return torch.stack([s[f"{name}.weight" if name.startswith("w_") else name] for s in states])

        initial = {name: stacked(name) for name in _NAMES}
        flat = torch.empty(sum(t.numel() for t in initial.values()), device=device)
        self.params, self.grads = _blocks(flat, initial), _blocks(torch.zeros_like(flat), initial)
        for name, block in self.params.items():
            block.copy_(initial[name])
        count = len(runs)
        # What multiplies u·e_key + u·e_value: the run's scale and the 1/sqrt(2) of the memory rows.
        self.factor = (torch.tensor(scales) / math.sqrt(2.0)).to(device).view(-1, 1, 1)
        self.slot = torch.tensor(seed_slots, device=device)  # run -> the batch of its seed
        # each run's τ, and 1 where it is learned (0: its gradient is zeroed, τ stays 0); a stack in which no run
        # learns one leaves τ out of every computation
        self.learns = any(learns)
        self.tau, self.g_tau = torch.zeros(count, device=device), torch.zeros(count, device=device)
        self.learning = torch.tensor(learns, dtype=torch.float32, device=device)
        leaves = list(self.params.values()) + ([self.tau] if self.learns else [])
        self.update = (StackedAdam if optimizer == "adam" else StackedSGD)(leaves, lrs)
        self.record = torch.empty(5, count, steps, device=device)  # one column per step; no host sync in the loop

    def step(self, batch: RecallBatch, step: int) -> None:
        """Train every run one step on its seed's batch (fields (S, B, ...)), and record it."""
        batch = RecallBatch(*(field[self.slot] for field in batch))  # (R, B, ...)
        temperature = self.tau.exp()  # (R,): exactly 1 for a run that learns none
        if self.learns:
            factor = self.factor * temperature.view(-1, 1, 1)
            loss, logits, weights, attention_logits = _recall_runs_step(
                self.params, self.grads, batch, factor, self.g_tau
            )
            self.g_tau.mul_(self.learning)
            self.update.step([*self.grads.values(), self.g_tau])
        else:
            loss, logits, weights, attention_logits = _recall_runs_step(self.params, self.grads, batch, self.factor)
            self.update.step(list(self.grads.values()))
        self.record[:, :, step] = step_statistics(batch, loss, logits, weights, attention_logits, temperature)


def step_statistics(
    batch: RecallBatch, loss: Tensor, logits: Tensor, weights: Tensor, attention_logits: Tensor, temperature: Tensor
) -> Tensor:
    """(5, R) what a step records of R runs, in the order of :class:`helpers.recall_runs.RunsHistory`'s fields,
    from the step's ``batch`` (fields (R, B, ...)), ``loss`` (R,), class ``logits`` (R, B, n_values), attention
    ``weights`` and ``attention_logits`` (R, B, P) and the ``temperature`` (R,) on top of the scale."""
    accuracy = (logits.argmax(dim=-1) == batch.target).float().mean(dim=1)
    on_answer = weights.gather(2, batch.position[..., None]).mean(dim=(1, 2))
    return torch.stack([loss, accuracy, on_answer, attention_logits.flatten(1).std(dim=1), temperature])


def _blocks(flat: Tensor, like: dict[str, Tensor]) -> dict[str, Tensor]:
    """``flat`` cut into one contiguous block per name, in order, each of the shape of ``like[name]``."""
    blocks, start = {}, 0
    for name, t in like.items():
        blocks[name] = flat[start : start + t.numel()].view(t.shape)
        start += t.numel()
    return blocks


@torch.no_grad()
def _recall_runs_step(
    params: dict[str, Tensor],
    grads: dict[str, Tensor],
    batch: RecallBatch,
    factor: Tensor,
    g_tau: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One forward and one backward pass of R runs, in the order of the module docstring.

    Writes into ``grads`` the gradient of each run's mean cross-entropy with respect to its own ``params`` (R, ...),
    matrix product by matrix product, in reverse. ``batch``: fields (R, B, P) and (R, B); ``factor`` (R, 1, 1): each
    run's scale / sqrt(2) (times e^τ); ``g_tau``, where given, (R,) receives d loss / d τ = Σ z · d loss / d z over
    each run's attention logits z. Returns the loss (R,), class logits (R, B, n_values), attention weights and
    logits ``scale · q·k`` (R, B, P).
    """
    E, w_q, w_k, w_v, w_o, b_o = (params[name] for name in _NAMES)
    g_E, g_w_q, g_w_k, g_w_v, g_w_o, g_b_o = (grads[name] for name in _NAMES)
    runs, vocabulary, d_model = E.shape
    n_pairs, batch_size, root2 = batch.pair_keys.shape[2], batch.pair_keys.shape[1], math.sqrt(2.0)
    n_keys = vocabulary - w_o.shape[1]
    # Forward. The query keys' rows of E, with E viewed as one (R·V, D) table.
    rows = (batch.query + vocabulary * torch.arange(runs, device=E.device)[:, None]).flatten()  # (R·B,)
    x = F.embedding(rows, E.view(runs * vocabulary, d_model)).view(runs, batch_size, d_model)  # (R, B, D)
    q = x @ w_q.mT  # (R, B, d_k)
    u = q @ w_k  # (R, B, D): W_kᵀ q, so that q·(W_k m) = u·m for any memory row m
    s = u @ E.mT  # (R, B, V): u·e for every key and every value
    index = torch.cat([batch.pair_keys, n_keys + batch.pair_values], dim=2)  # (R, B, 2P): the rows of each pair
    pair = s.gather(2, index)
    attention_logits = (pair[..., :n_pairs] + pair[..., n_pairs:]) * factor  # scale · q·k: the scale acts here
    weights = attention_logits.softmax(dim=-1)  # (R, B, P)
    # Σ_p w_p m_p with m_p = (e_key + e_value)/sqrt(2): each pair's weight on its two rows of E
    mass = torch.zeros_like(s).scatter_add_(2, index, (weights / root2).repeat(1, 1, 2))  # (R, B, V)
    mixed = mass @ E  # (R, B, D)
    output = mixed @ w_v.mT
    logits = torch.baddbmm(b_o[:, None, :], output, w_o.mT)  # (R, B, n_values)
    log_p = logits.log_softmax(dim=-1)
    loss = -log_p.gather(2, batch.target[..., None]).mean(dim=(1, 2))  # (R,)

    # Backward, from d loss / d logits = (softmax - onehot(target)) / B.
    g_logits = log_p.exp().scatter_add_(2, batch.target[..., None], torch.full_like(log_p[..., :1], -1.0))
    g_logits /= batch_size
    torch.sum(g_logits, dim=1, out=g_b_o)
    torch.bmm(g_logits.mT, output, out=g_w_o)
    g_output = g_logits @ w_o  # (R, B, D)
    torch.bmm(g_output.mT, mixed, out=g_w_v)
    g_mixed = g_output @ w_v  # (R, B, D)
    torch.bmm(mass.mT, g_mixed, out=g_E)  # E's gradient through the values ...
    g_mass = (g_mixed @ E.mT).gather(2, index) / root2  # (R, B, 2P)
    g_weights = g_mass[..., :n_pairs] + g_mass[..., n_pairs:]  # (R, B, P)
    # through the softmax (helpers.softmax_backward), then the scale
    g_z = weights * (g_weights - (weights * g_weights).sum(dim=-1, keepdim=True))  # d loss / d attention_logits
    if g_tau is not None:
        torch.sum(g_z * attention_logits, dim=(1, 2), out=g_tau)
    g_logit = g_z * factor
    g_s = torch.zeros_like(s).scatter_add_(2, index, g_logit.repeat(1, 1, 2))  # (R, B, V)
    g_E.baddbmm_(g_s.mT, u)  # ... through the keys ...
    g_u = g_s @ E
    torch.bmm(q.mT, g_u, out=g_w_k)
    g_q = g_u @ w_k.mT  # (R, B, d_k)
    torch.bmm(g_q.mT, x, out=g_w_q)
    g_E.view(runs * vocabulary, d_model).index_add_(0, rows, (g_q @ w_q).view(-1, d_model))  # ... and the queries
    return loss, logits, weights, attention_logits


def _equal_lr_blocks(lrs: list[float]) -> list[tuple[float, slice]]:
    """The runs cut into blocks of consecutive runs with the same learning rate."""
    blocks, start = [], 0
    for end in range(1, len(lrs) + 1):
        if end == len(lrs) or lrs[end] != lrs[start]:
            blocks.append((lrs[start], slice(start, end)))
            start = end
    return blocks


class StackedSGD:
    """``torch.optim.SGD`` (no momentum) on stacked parameters, one learning rate per run: bit for bit its
    ``param.add_(grad, alpha=-lr)``, once per block of runs that share a rate."""

    def __init__(self, params: list[Tensor], lrs: list[float]) -> None:
        self.params, self.blocks = params, _equal_lr_blocks(lrs)

    def step(self, grads: list[Tensor]) -> None:
        for lr, runs in self.blocks:
            for p, g in zip(self.params, grads, strict=True):
                p[runs].add_(g[runs], alpha=-lr)


class StackedAdam:
    """``torch.optim.Adam(fused=True)`` (its defaults) on stacked parameters, one learning rate per run: bit for
    bit its update, the same fused kernel called once per block of runs that share a rate."""

    def __init__(self, params: list[Tensor], lrs: list[float]) -> None:
        self.params, self.blocks = params, _equal_lr_blocks(lrs)
        self.exp_avg = [torch.zeros_like(p) for p in params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in params]
        self.t = torch.zeros((), device=params[0].device)  # the step count, shared by every run

    def step(self, grads: list[Tensor]) -> None:
        self.t += 1
        t = [self.t] * len(self.params)  # every run's step count: one tensor
        for lr, runs in self.blocks:
            p, g, m, v = ([x[runs] for x in xs] for xs in (self.params, grads, self.exp_avg, self.exp_avg_sq))
            _fused_adam(p, g, m, v, [], t, lr=lr)
