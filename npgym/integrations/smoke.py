"""A tiny causal language model built locally, for smoke runs and learning tests on CPU.

Nothing is downloaded: a byte-level BPE tokenizer is trained on the run's own texts and a
randomly initialised two-layer Qwen2 is built to its vocabulary. :func:`warm_up` teaches it the
answer format with a few supervised steps on (prompt, answer) pairs, so that GRPO then starts
from samples whose rewards differ. Needs ``npgym[trl]`` (transformers, tokenizers, torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TAGS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_tokenizer(texts: Sequence[str], chat_template: str = CHATML, vocab_size: int = 800) -> Any:
    """Byte-level BPE trained on ``texts``, with ChatML-style special and tool-call tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(texts, trainer)
    bpe.add_tokens(TOOL_TAGS)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tokenizer.chat_template = chat_template
    return tokenizer


def tiny_model(tokenizer: Any, seed: int = 0, hidden_size: int = 32, layers: int = 2) -> Any:
    """A randomly initialised Qwen2 causal LM sized to ``tokenizer`` (float32, CPU)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return Qwen2ForCausalLM(config)


def prompt_ids(tokenizer: Any, prompt: Any) -> list[int]:
    """Token ids of a dataset row's prompt as the trainer feeds it (chat template or text)."""
    if isinstance(prompt, str):
        return tokenizer(prompt, add_special_tokens=False)["input_ids"]
    text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def warm_up(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[Any, str]],
    steps: int = 40,
    learning_rate: float = 3e-3,
) -> list[float]:
    """Supervised steps on (prompt, answer) pairs, loss on the answer tokens only; the losses.

    ``prompt`` is a dataset row's prompt (messages or text); ``answer`` the target completion,
    e.g. ``task.format_answer(reference.solution)``. One pair per step, in turn.
    """
    import torch

    examples = []
    for prompt, answer in pairs:
        prefix = prompt_ids(tokenizer, prompt)
        target = tokenizer(answer + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
        examples.append((prefix, target))
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    model.train()
    losses = []
    for step in range(steps):
        prefix, target = examples[step % len(examples)]
        ids = torch.tensor([prefix + target])
        labels = ids.clone()
        labels[0, : len(prefix)] = -100
        loss = model(input_ids=ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def warm_started(
    prompts: Sequence[Any], answers: Sequence[str], steps: int = 40, hidden_size: int = 64
) -> tuple[Any, Any]:
    """A tokenizer and a tiny model trained on ``prompts`` and warmed up on ``answers``.

    ``prompts`` are dataset rows' prompts (messages or text), ``answers`` their target
    completions; ``steps=0`` leaves the model random. Returns ``(tokenizer, model)``.
    """
    texts = [_prompt_text(prompt) for prompt in prompts]
    tokenizer = tiny_tokenizer([*texts, *answers, *answers])
    model = tiny_model(tokenizer, hidden_size=hidden_size)
    if steps:
        warm_up(model, tokenizer, list(zip(prompts, answers, strict=True)), steps)
    return tokenizer, model


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(message.get("content") or "") for message in prompt)


def save_tiny(
    texts: Sequence[str], folder: str | Path, seed: int = 0, chat_template: str = CHATML
) -> Path:
    """Build a tiny tokenizer and model on ``texts`` and save both to ``folder`` (its path)."""
    folder = Path(folder)
    tokenizer = tiny_tokenizer(texts, chat_template)
    tiny_model(tokenizer, seed).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
