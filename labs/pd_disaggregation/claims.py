"""The pd_disaggregation lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun


def connector_completeness(doc: dict) -> Check:
    p = doc["parameters"]
    want = [(role, n) for role in ("kv_producer", "kv_consumer") for n in p["prompt_lens"]]
    got = [(m["series"], m["prompt_tokens"]) for m in doc["measurements"]]
    wrong = [m["label"] for m in doc["measurements"] if m["new_tokens"] != p["new_tokens"]]
    handed = [h["prompt_tokens"] for h in doc["handoffs"]]
    if got != want or wrong or handed != p["prompt_lens"]:
        detail = f"requests {got} vs planned {want}; wrong new tokens: {wrong}; handoffs {handed}"
        return Check("FAIL", "completeness", detail)
    return Check("PASS", "completeness", f"{len(want)} requests, exact prompt and new tokens")


def connector_claims(doc: dict) -> list[Check]:
    from pd_disaggregation.example_connector import (
        loaded_tokens,
        stored_tokens,
    )  # the lesson's rule

    block = doc["parameters"]["block_size"]
    kappa = doc["model"]["kv_bytes_per_token"]
    loads, stores, same, ties = [], [], [], []
    for h in doc["handoffs"]:
        n = h["prompt_tokens"]
        if h["loaded_tokens"] != loaded_tokens(n, block):
            loads.append(f"prompt {n}: loaded {h['loaded_tokens']} != {loaded_tokens(n, block)}")
        if h["stored_tokens"] != stored_tokens(n, block):
            stores.append(f"prompt {n}: stored {h['stored_tokens']} != {stored_tokens(n, block)}")
        elif kappa is not None and h["stored_bytes"] != kappa * h["stored_tokens"]:
            stores.append(
                f"prompt {n}: {h['stored_bytes']} B != kappa {kappa} x {h['stored_tokens']}"
            )
        if not h["near_tie"]:
            same.append(
                f"prompt {n}: differs at new token {h['diverged_at']} (top-2 gap "
                f"{h['top2_gap']} nats, above {doc['parameters']['near_tie_nats']})"
            )
        elif not h["tokens_match"]:
            ties.append(f"prompt {n} at token {h['diverged_at']} (gap {h['top2_gap']:.3f})")
    producer_hits = [
        m["label"]
        for m in doc["measurements"]
        if m["series"] == "kv_producer" and m["cached_tokens"]
    ]
    hits = doc["connector_counters"].get("external_prefix_cache_hits")
    total = sum(h["loaded_tokens"] for h in doc["handoffs"])
    if hits != total:
        loads.append(f"engine counter external_prefix_cache_hits {hits} != {total} loaded")
    if producer_hits:
        loads.append(f"the producer reports cached tokens: {producer_hits}")
    name_load = "consumer loaded the tokens the connector's rule predicts"
    name_store = "KV on disk is kappa x stored tokens"
    name_same = "consumer's tokens equal the producer's, up to a near-tie"
    return [
        Check("FAIL" if loads else "PASS", name_load, "; ".join(loads) or f"block size {block}"),
        Check(
            "FAIL" if stores else ("SKIP" if kappa is None else "PASS"),
            name_store,
            "; ".join(stores)
            or ("model unknown to the core" if kappa is None else f"kappa {kappa} B/token"),
        ),
        Check(
            "FAIL" if same else "PASS",
            name_same,
            "; ".join(same)
            or f"{len(doc['handoffs'])} prompts"
            + (f"; near-ties: {', '.join(ties)}" if ties else ", every token equal"),
        ),
    ]


def connector_ttft_claim(doc: dict) -> Check:
    name = "consumer's TTFT below the producer's at the longest prompt"
    n = max(doc["parameters"]["prompt_lens"])
    ttft = {m["series"]: m["ttft_s"] for m in doc["measurements"] if m["prompt_tokens"] == n}
    loaded = next(h["loaded_tokens"] for h in doc["handoffs"] if h["prompt_tokens"] == n)
    if not loaded:
        return Check("SKIP", name, f"prompt {n}: nothing loaded")
    a, b = ttft["kv_producer"], ttft["kv_consumer"]
    return Check("PASS" if b < a else "FAIL", name, f"producer {lab.ms(a)}, consumer {lab.ms(b)}")


CLAIMS = {
    "kv_connector": Claims(
        lambda doc: [connector_completeness(doc), *connector_claims(doc)],
        lambda doc: [connector_ttft_claim(doc)],
        "CPU run: a folder, not a link, carried the KV; its TTFT says nothing about a GPU",
    ),
}


# ---------------------------------------------------------------- CPU smoke run

PROMPTS = (257, 300)  # 257: P - 1 is whole blocks of 128, the consumer looks under another name


def the_consumer_loads_what_the_rule_predicts(run: SmokeRun) -> None:
    from pd_disaggregation.example_connector import loaded_tokens, stored_tokens

    block = run.doc["parameters"]["block_size"]
    assert block == 128  # the CPU platform's default
    by_prompt = {h["prompt_tokens"]: h for h in run.doc["handoffs"]}
    assert sorted(by_prompt) == list(PROMPTS)
    for n, h in by_prompt.items():
        assert h["stored_tokens"] == stored_tokens(n, block) > 0
        assert h["loaded_tokens"] == loaded_tokens(n, block)
    assert by_prompt[257]["loaded_tokens"] == 0 and by_prompt[300]["loaded_tokens"] == 256
    assert run.doc["connector_counters"]["external_prefix_cache_hits"] == 256


def the_kv_on_disk_is_kappa_times_the_stored_tokens(run: SmokeRun) -> None:
    kappa = run.doc["model"]["kv_bytes_per_token"]
    for h in run.doc["handoffs"]:
        assert h["stored_bytes"] == kappa * h["stored_tokens"] == h["expected_stored_bytes"]


def the_consumer_generates_the_producers_tokens(run: SmokeRun) -> None:
    assert all(h["tokens_match"] for h in run.doc["handoffs"])
    assert "external_prefix_cache_hits" in run.stdout


SMOKE = (
    Smoke(
        "kv_connector.py",
        f"--config tiny --prompt-lens {','.join(map(str, PROMPTS))} --new-tokens 4 "
        "--storage {tmp}/kv",  # {tmp}: the run's own empty folder
        (
            the_consumer_loads_what_the_rule_predicts,
            the_kv_on_disk_is_kappa_times_the_stored_tokens,
            the_consumer_generates_the_producers_tokens,
        ),
        (
            "consumer loaded the tokens the connector's rule predicts",
            "KV on disk is kappa x stored tokens",
        ),
    ),
)
