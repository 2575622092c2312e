"""Settings: precedence flags > env > file > defaults, sources, validation, password resolution."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from atlas_sync.config import Settings, load_settings
from atlas_sync.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_file_env_or_flags(tmp_path: Path) -> None:
    s = load_settings(env={}, cwd=tmp_path)
    assert s.url is None and s.embedded
    assert (s.username, s.profile, s.batch_size, s.parallel) == ("admin", "lineage", 500, 2)
    assert (s.connect_timeout, s.read_timeout, s.max_delete_percent) == (10, 60, 50)
    assert s.data_dir == Path(".atlas-sync")
    assert set(s.sources.values()) == {"default"}


def test_flags_beat_env_beat_file_beat_defaults(tmp_path: Path) -> None:
    write(
        tmp_path / "atlas-sync.toml",
        'url = "http://file:21000"\ndomain = "file_dom"\nprofile = "pico"\nbatch_size = 100\n',
    )
    env = {"ATLAS_URL": "http://env:21000", "ATLAS_SYNC_DOMAIN": "env_dom"}
    s = load_settings(
        overrides={"url": "http://flag:21000", "job": None},
        env=env,
        cwd=tmp_path,
        flag_names={"url": "--url"},
    )
    assert s.url == "http://flag:21000"
    assert s.domain == "env_dom"
    assert s.profile == "pico" and s.batch_size == 100
    assert s.job is None
    src = s.sources
    assert src["url"] == "flag --url"
    assert src["domain"] == "env ATLAS_SYNC_DOMAIN"
    assert src["profile"] == f"file {tmp_path / 'atlas-sync.toml'}"
    assert src["job"] == "default"


def test_config_flag_and_env_var_choose_the_file(tmp_path: Path) -> None:
    a = write(tmp_path / "a.toml", 'domain = "a"\n')
    b = write(tmp_path / "b.toml", 'domain = "b"\n')
    assert load_settings(a, env={"ATLAS_SYNC_CONFIG": str(b)}, cwd=tmp_path).domain == "a"
    assert load_settings(env={"ATLAS_SYNC_CONFIG": str(b)}, cwd=tmp_path).domain == "b"


def test_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml", env={}, cwd=tmp_path)


def test_unknown_key_in_file_names_file_and_key_and_suggests(tmp_path: Path) -> None:
    path = write(tmp_path / "atlas-sync.toml", "batchsize = 5\n")
    with pytest.raises(ConfigError) as info:
        load_settings(env={}, cwd=tmp_path)
    assert str(path) in str(info.value) and "'batchsize'" in str(info.value)
    assert "did you mean 'batch_size'" in str(info.value)


def test_wrong_type_in_file_names_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path / "atlas-sync.toml", 'parallel = "many"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(env={}, cwd=tmp_path)
    assert f"{path}: key 'parallel'" in str(info.value)


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path / "atlas-sync.toml", 'url = "unterminated\n')
    with pytest.raises(ConfigError, match=str(path)):
        load_settings(env={}, cwd=tmp_path)


def test_password_is_not_allowed_in_the_file(tmp_path: Path) -> None:
    write(tmp_path / "atlas-sync.toml", 'password = "hunter2"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(env={}, cwd=tmp_path)
    assert "hunter2" not in str(info.value) + (info.value.hint or "")
    assert "password_file" in (info.value.hint or "")


def test_relative_paths_in_file_are_relative_to_the_file(tmp_path: Path) -> None:
    sub = tmp_path / "conf"
    sub.mkdir()
    path = write(sub / "x.toml", 'data_dir = "state"\nca_bundle = "/etc/ca.pem"\n')
    s = load_settings(path, env={}, cwd=tmp_path)
    assert s.data_dir == sub / "state"
    assert s.ca_bundle == Path("/etc/ca.pem")


def test_bad_env_value_names_the_variable_not_the_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env={"ATLAS_READ_TIMEOUT": "soon"}, cwd=tmp_path)
    assert str(info.value).startswith("ATLAS_READ_TIMEOUT:")


def test_empty_env_values_count_as_unset(tmp_path: Path) -> None:
    s = load_settings(env={"ATLAS_URL": "", "ATLAS_SYNC_DOMAIN": "  "}, cwd=tmp_path)
    assert s.url is None and s.domain is None


def test_env_parses_numbers_and_booleans(tmp_path: Path) -> None:
    env = {"ATLAS_SYNC_BATCH_SIZE": "250", "ATLAS_INSECURE": "true", "ATLAS_SYNC_MAX_DELETE_PERCENT": "10"}
    s = load_settings(env=env, cwd=tmp_path)
    assert (s.batch_size, s.insecure, s.max_delete_percent) == (250, True, 10.0)


def test_out_of_range_value_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_delete_percent"):
        load_settings(overrides={"max_delete_percent": 150}, env={}, cwd=tmp_path)


def test_url_is_normalised(tmp_path: Path) -> None:
    s = load_settings(env={"ATLAS_URL": "https://atlas:21000/api/atlas/"}, cwd=tmp_path)
    assert s.url == "https://atlas:21000"


def test_password_from_env_is_secret(tmp_path: Path) -> None:
    s = load_settings(env={"ATLAS_URL": "http://a:1", "ATLAS_PASSWORD": "hunter2"}, cwd=tmp_path)
    assert s.resolve_password() == "hunter2"
    assert "hunter2" not in repr(s) and "hunter2" not in str(s)
    assert "hunter2" not in str(s.describe())
    assert s.sources["password"] == "env ATLAS_PASSWORD"


def test_password_file_first_line_is_used(tmp_path: Path) -> None:
    pw = write(tmp_path / "pw", "hunter2\n")
    os.chmod(pw, 0o600)
    s = load_settings(env={"ATLAS_URL": "http://a:1", "ATLAS_PASSWORD_FILE": str(pw)}, cwd=tmp_path)
    assert s.resolve_password() == "hunter2"


def test_missing_password_file_is_a_config_error(tmp_path: Path) -> None:
    s = Settings(url="http://a:1", password_file=tmp_path / "nope")
    with pytest.raises(ConfigError, match="does not exist"):
        s.resolve_password()


def test_embedded_emulator_uses_admin_without_asking() -> None:
    assert Settings().resolve_password() == "admin"


def test_real_atlas_without_password_asks_or_fails_with_hint() -> None:
    s = Settings(url="http://atlas:21000")
    asked: list[str] = []
    assert s.resolve_password(prompt=lambda text: asked.append(text) or "typed") == "typed"
    assert "admin" in asked[0] and "http://atlas:21000" in asked[0]
    with pytest.raises(ConfigError) as info:
        s.resolve_password()
    assert "ATLAS_PASSWORD" in (info.value.hint or "")


def test_every_setting_has_a_row_in_docs_configuration_md() -> None:
    from atlas_sync.config import ENV_VARS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines() if line.startswith("| `")}
    for key in Settings.model_fields:
        assert f"`{key}`" in rows, f"docs/configuration.md has no row for {key}"
        env = ENV_VARS.get(key)
        if env and key != "password":
            assert f"`{env}`" in rows[f"`{key}`"], f"{key}'s row does not name {env}"
