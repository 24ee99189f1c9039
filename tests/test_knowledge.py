"""The knowledge base: bundled documents, CJK-aware FTS5 indexing and BM25 ranking."""

from __future__ import annotations

import pytest

from core.tools.catalog import default_registry
from core.tools.knowledge import KNOWLEDGE_DIR, load_documents, search_knowledge, tokenize


def _search(query: str, top_k: int = 3) -> list[dict]:
    return default_registry({}).call("search_knowledge", {"query": query, "top_k": top_k})["hits"]


def test_documents_are_package_data():
    names = {path.name for path in KNOWLEDGE_DIR.glob("*.md")}
    assert {"robot-vacuum-guide-zh.md", "robot-vacuum-guide-en.md",
            "return-refund-policy.md"} <= names
    documents = load_documents()
    assert all(doc["title"] and doc["content"] for doc in documents)
    assert {doc["lang"] for doc in documents} == {"zh", "en"}


def test_tokenize_makes_cjk_bigrams_and_stems_english():
    assert tokenize("扫地机 老人", for_query=True) == ["扫地", "地机", "老人"]
    assert tokenize("Robot vacuums") == ["robot", "vacuum"]
    assert "老" in tokenize("老人")  # the index also keeps single characters


@pytest.mark.parametrize("query", ["扫地机 老人", "robot vacuum for elderly"])
def test_s10_lite_guide_ranks_first(query):
    hits = _search(query)
    assert "比特 S10 Lite" in hits[0]["content"]
    assert "guide" in hits[0]["title"].lower() or "指南" in hits[0]["title"]
    assert hits[0]["score"] > hits[-1]["score"] or len(hits) == 1


def test_chinese_query_prefers_the_chinese_guide_and_english_the_english_one():
    assert _search("扫地机 老人")[0]["title"].startswith("扫地机选购指南")
    assert _search("robot vacuum for elderly")[0]["title"].startswith("Robot vacuum")


def test_policy_and_local_research_documents():
    assert "退货" in _search("七天无理由 退货")[0]["title"]
    hit = _search("AI coding tools")[0]
    assert "local" in hit["title"].lower()
    assert hit["source"].startswith("local:")


def test_result_shape_and_top_k():
    hits = _search("扫地机", top_k=1)
    assert len(hits) == 1
    assert set(hits[0]) == {"title", "content", "score", "source"}
    assert len(_search("policy", top_k=50)) <= 10


@pytest.mark.parametrize("query", [
    "", "   ", '"', "'; DROP TABLE docs; --", "AND OR NOT", "NEAR(a b)", "*", "title:x",
    "😀🎉", "(((", "x" * 10_000, "扫" * 5_000, "a^b -c +d", "\x00\x01",
])
def test_odd_queries_never_fail(query):
    result = search_knowledge.function(query)
    assert isinstance(result["hits"], list)


def test_no_match_returns_no_hits():
    assert _search("zzzzqqq") == []
