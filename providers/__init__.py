"""Model providers of our own, for tests, CI, benchmarks and the demo (no GPU, no hosted model).

- ``offline_model``: the deterministic, offline Inspect provider ``offline/<policy>``.
- ``schema_sampler``: JSON documents drawn from a JSON schema (the offline model's answers, and
  the tests' fake OpenAI server's).
- ``local_model``: SmolLM2-135M-Instruct served by llama.cpp over an OpenAI-compatible API on
  loopback (``python -m providers.local_model serve``).

They depend on nothing else in the suite but ``blame.arguments`` (a bad ``-M`` value is its one-line
``ArgumentError``); the Inspect entry point (``blame_bench._registry``) registers ``offline/``.
"""
