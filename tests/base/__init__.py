"""The base: safe expressions, text forms, untrusted text, message codes, the lifecycle."""
