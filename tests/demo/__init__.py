"""The demo pack: the shop, operations and analytics toolsets, the knowledge base, the scenarios."""
