"""The benchmarks' code on tiny sizes: tables, Markdown, durable runs, plan quality."""
