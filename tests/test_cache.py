from testbed.common import cache


def test_key_changes_with_content(tmp_path):
    f = tmp_path / "a.config"
    f.write_text("CONFIG_X=y\n")
    k1 = cache.content_key([("source", "6.12")], [("a.config", f)])
    f.write_text("CONFIG_X=n\n")
    k2 = cache.content_key([("source", "6.12")], [("a.config", f)])
    assert k1 != k2


def test_key_ignores_location_but_not_names(tmp_path):
    for d in ("one", "two"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "p.txt").write_text("same")
    k1 = cache.content_key([], cache.tree_files(tmp_path / "one"))
    k2 = cache.content_key([], cache.tree_files(tmp_path / "two"))
    assert k1 == k2
    (tmp_path / "two" / "p.txt").rename(tmp_path / "two" / "q.txt")
    assert k1 != cache.content_key([], cache.tree_files(tmp_path / "two"))


def test_key_depends_on_parts():
    assert cache.content_key([("a", "1")]) != cache.content_key([("a", "2")])
    assert len(cache.content_key([("a", "1")])) == 16


def test_cache_root_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(cache.ENV_CACHE, raising=False)
    assert cache.cache_root() == tmp_path / "xdg" / cache.APP
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path / "env"))
    assert cache.cache_root() == tmp_path / "env"
    assert cache.cache_root(str(tmp_path / "flag")) == tmp_path / "flag"
