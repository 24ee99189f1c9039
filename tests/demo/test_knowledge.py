"""The knowledge base: bundled documents, CJK-aware FTS5 indexing and BM25 ranking."""

from __future__ import annotations

import pytest

from core.tools.toolsets import default_registry
from demo.knowledge import KNOWLEDGE_DIR, load_documents, search_knowledge, tokenize


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


def test_relevance_thresholds_are_pinned():
    from demo.knowledge import OVERLAP_SCORE, OVERLAP_SHARE, RELEVANT_SCORE

    assert (RELEVANT_SCORE, OVERLAP_SCORE, OVERLAP_SHARE) == (4.0, 2.0, 0.5)


@pytest.mark.parametrize("query", [
    "what's the revenue by month?", "weather in Beijing tomorrow", "北京明天天气怎么样",
    "top 5 customers by spend", "how do I reset my password", "tell me a joke", "价格",
])
def test_a_question_no_document_covers_gets_no_hit(query):
    assert _search(query, top_k=10) == []


@pytest.mark.parametrize(("query", "source"), [
    ("退货政策是什么", "return-refund-policy.md"),
    ("how long does shipping take", "shipping-policy.md"),
    ("快递多久到", "shipping-policy.md"),
    ("what is churn", "churn-analysis-note.md"),
    ("S10 Lite", "robot-vacuum-guide-en.md"),  # short: every term held, a lower score
    ("how to diagnose payment-service", "service-runbooks.md"),
])
def test_a_question_a_document_covers_finds_it(query, source):
    hits = _search(query)
    assert hits and hits[0]["source"] == f"local:{source}"
    assert all(hit["score"] >= 2.0 for hit in hits)


def test_words_of_time_and_quantity_match_no_document():
    hits = _search("Which of our services are degraded or down right now, and what is the "
                   "likely cause of each?", top_k=10)
    assert [hit["source"] for hit in hits] == ["local:service-runbooks.md"]


def test_single_latin_letters_are_not_terms():
    assert tokenize("what's the revenue", for_query=True) == ["revenue"]
