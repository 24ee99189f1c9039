"""The knowledge base: bundled Markdown documents indexed with SQLite FTS5 and ranked by BM25.

Chinese has no spaces, so text is segmented before indexing: runs of CJK characters become
overlapping bigrams (plus single characters), English words are lower-cased and lightly
stemmed, and queries are expanded with a few cross-language synonyms (elderly ↔ 老人,
robot vacuum ↔ 扫地机 ...). Queries are rebuilt from tokens, so no input can cause an FTS5
syntax error. A document is returned only when it is relevant: its BM25 score reaches
RELEVANT_SCORE, or OVERLAP_SCORE while it holds at least half of the query's own terms
(measured on the bundled documents: the questions they answer score 4.9 or more, or hold
every term of a short query such as "S10 Lite"; unrelated ones such as "revenue by month"
or "weather in Beijing" score 2.4 or less and share at most half of their terms). So
"nothing relevant" is an empty result, never the closest article.
"""

from __future__ import annotations

import hashlib
import sqlite3
from functools import lru_cache
from pathlib import Path

from core.base.home import planboard_home
from core.base.language import detect_language, words
from core.base.text import clip
from core.tools.registry import ToolHints, tool
from demo.db import connect, ensure_database

__all__ = [
    "KNOWLEDGE_DIR",
    "OVERLAP_SCORE",
    "OVERLAP_SHARE",
    "RELEVANT_SCORE",
    "ensure_knowledge_db",
    "knowledge_db_path",
    "load_documents",
    "search_knowledge",
    "tokenize",
]

KNOWLEDGE_DIR = Path(__file__).resolve().parent / "knowledge_base"
_INDEX_VERSION = "3"  # 2: no single Latin letters ("what's" → "s"); 3: more stop words
RELEVANT_SCORE = 4.0  # relevant on its score alone
OVERLAP_SCORE = 2.0  # relevant when the document also holds OVERLAP_SHARE of the query's terms
OVERLAP_SHARE = 0.5
_CONTENT_CHARS = 1200
_MAX_QUERY_TOKENS = 64
_SYNONYM_WEIGHT = 0.4
_SAME_LANGUAGE_BONUS = 1.15
_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "i", "in",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "that", "the", "their", "them",
    "they", "this", "to", "under", "was", "we", "what", "which", "with", "you", "your", "want",
    "wants", "need", "needs", "please", "help", "can", "could", "would", "should", "do",
    "does", "some", "any", "one", "get",
    # words of time and quantity that say nothing about the topic ("right now", "each")
    "now", "right", "each", "every", "all", "also", "just", "currently", "today", "tell",
    "us", "how", "when", "where", "why", "who", "will", "there", "here", "about", "likely",
})
_SYNONYMS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("elderly", "senior", "old people", "parents", "grandparent", "aged"), "老人 长辈"),
    (("老人", "长辈", "父母", "爸妈", "老年"), "elderly senior"),
    (("robot vacuum", "robotic vacuum", "vacuum", "sweeper", "roomba"), "扫地机 robot vacuum"),
    (("扫地机", "扫地机器人"), "robot vacuum"),
    (("easy", "simple", "user-friendly"), "好操作 一键启停"),
    (("好操作", "操作简单", "简单", "易用", "好用"), "easy simple 一键启停"),
    (("refund", "return"), "退款 退货"),
    (("退款", "退货", "退掉"), "refund return"),
    (("shipping", "delivery", "logistics", "courier", "tracking"), "物流 配送 快递"),
    (("物流", "快递", "配送", "发货"), "shipping delivery tracking"),
    (("churn", "attrition", "retention"), "流失 留存"),
    (("流失", "留存"), "churn retention"),
    (("coding", "programming", "code assistant"), "编程 coding"),
    (("编程", "代码"), "coding code"),
    (("health", "diagnose", "scale", "runbook"), "健康 诊断 扩容"),
    (("健康", "诊断", "扩容", "运维"), "health diagnose scale runbook"),
)


def _stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4:
        return word[:-2]
    return word


def tokenize(text: str, *, for_query: bool = False) -> list[str]:
    """Index tokens: the shared words (Chinese bigrams, and single characters in the
    index), English ones stemmed and without stop words."""
    return [_stem(w) for w in words(text, characters=not for_query)
            if w not in _STOPWORDS and not (len(w) == 1 and w.isascii() and w.isalpha())]


def _expand(query: str) -> str:
    lowered = query.lower()
    extra = [expansion for keys, expansion in _SYNONYMS if any(k in lowered for k in keys)]
    return " ".join([query, *extra])


def load_documents() -> list[dict[str, str]]:
    """The bundled documents: file name, title (first heading), body and language."""
    documents = []
    for path in sorted(KNOWLEDGE_DIR.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        first, _, body = text.partition("\n")
        title = first.lstrip("#").strip() or path.stem
        documents.append({
            "file": path.name, "title": title, "content": body.strip(),
            "lang": "zh" if path.stem.endswith("-zh") else detect_language(body),
        })
    return documents


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    digest = hashlib.sha256(_INDEX_VERSION.encode())
    for doc in load_documents():
        digest.update(doc["file"].encode() + doc["title"].encode() + doc["content"].encode())
    return digest.hexdigest()[:12]


def knowledge_db_path() -> Path:
    """The index file for the current documents (a new file whenever they change)."""
    return planboard_home() / f"knowledge-{_fingerprint()}.db"


def ensure_knowledge_db() -> Path:
    """Build the index for the bundled documents on first use; return its path."""
    return ensure_database(knowledge_db_path(), _build, wal=False)


def _build(conn: sqlite3.Connection) -> None:
    conn.executescript(
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, file TEXT, title TEXT, content TEXT,"
        " lang TEXT);"
        "CREATE VIRTUAL TABLE docs_fts USING fts5(title_tokens, body_tokens,"
        " tokenize = 'unicode61');"
    )
    for number, doc in enumerate(load_documents(), start=1):
        conn.execute(
            "INSERT INTO docs VALUES (?, ?, ?, ?, ?)",
            (number, doc["file"], doc["title"], doc["content"], doc["lang"]),
        )
        conn.execute(
            "INSERT INTO docs_fts (rowid, title_tokens, body_tokens) VALUES (?, ?, ?)",
            (number, " ".join(tokenize(doc["title"])), " ".join(tokenize(doc["content"]))),
        )


def _match_expressions(query: str) -> tuple[str, str]:
    """FTS5 expressions for the query's own tokens and for its synonym expansion."""
    own = list(dict.fromkeys(tokenize(query, for_query=True)))[:_MAX_QUERY_TOKENS]
    expanded = [
        token for token in dict.fromkeys(tokenize(_expand(query), for_query=True))
        if token not in own
    ][:_MAX_QUERY_TOKENS]
    return _or_terms(own), _or_terms(expanded)


def _or_terms(tokens: list[str]) -> str:
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)


def _bm25(conn: sqlite3.Connection, expression: str) -> dict[int, float]:
    if not expression:
        return {}
    rows = conn.execute(
        "SELECT rowid, bm25(docs_fts, 3.0, 1.0) FROM docs_fts WHERE docs_fts MATCH ?",
        (expression,),
    ).fetchall()
    return {row[0]: -row[1] for row in rows}


@tool(read_only=True,
      keywords=("search", "knowledge", "recommend", "guide", "policy", "which", "buy", "搜索",
                "知识库", "推荐", "想要", "想买", "选购", "政策", "规则", "怎么", "什么"),
      hints=ToolHints(answers_questions=True))
def search_knowledge(query: str, top_k: int = 3) -> dict:
    """Search the shop's knowledge base (product guides, policies, runbooks, notes) by meaning;
    only documents relevant to the query are returned (none when nothing covers it).

    Args:
        query: what to look for, in Chinese or English, for example "扫地机 老人".
        top_k: how many documents to return (1-10).
    """
    top_k = max(1, min(int(top_k), 10))
    own, expanded = _match_expressions(query or "")
    conn = connect(ensure_knowledge_db(), read_only=True)
    try:
        direct, related = _bm25(conn, own), _bm25(conn, expanded)
        docs = {row["id"]: row for row in conn.execute("SELECT * FROM docs")}
    finally:
        conn.close()
    language = detect_language(query or "")
    scores = {
        doc_id: (direct.get(doc_id, 0.0) + _SYNONYM_WEIGHT * related.get(doc_id, 0.0))
        * (_SAME_LANGUAGE_BONUS if docs[doc_id]["lang"] == language else 1.0)
        for doc_id in set(direct) | set(related)
    }
    own_terms = set(tokenize(query or "", for_query=True))
    relevant = [doc_id for doc_id in scores
                if _relevant(scores[doc_id], own_terms, docs[doc_id])]
    ranked = sorted(relevant, key=lambda doc_id: (-scores[doc_id], doc_id))[:top_k]
    return {"hits": [
        {"title": docs[doc_id]["title"], "content": clip(docs[doc_id]["content"], _CONTENT_CHARS),
         "score": round(scores[doc_id], 3), "source": f"local:{docs[doc_id]['file']}"}
        for doc_id in ranked
    ]}


def _relevant(score: float, own_terms: set[str], doc: sqlite3.Row) -> bool:
    """Whether a document scoring ``score`` answers a query of ``own_terms`` (see above)."""
    if score >= RELEVANT_SCORE:
        return True
    if score < OVERLAP_SCORE or not own_terms:
        return False
    held = own_terms & set(tokenize(doc["title"] + "\n" + doc["content"]))
    return len(held) >= OVERLAP_SHARE * len(own_terms)

