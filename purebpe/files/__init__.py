"""Tokenizer files of any origin: recognise one by its content, load it, convert it.

Where :mod:`purebpe.formats` reads and writes *models* (vocab and merges), this package
builds :class:`purebpe.Tokenizer` objects from the files other projects ship: OpenAI-style
rank files with a model's own pattern (Llama 3/4, Qwen, Whisper), Mistral's Tekken, GPT-2
pairs, and (through :mod:`purebpe.hf`) any BPE ``tokenizer.json``. It sits above the
tokenizer and the HF pipeline, which it composes.
"""
