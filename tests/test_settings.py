"""Server settings: built from the environment at startup, errors name the variable."""

import pytest

from app.errors import ConfigError
from app.settings import Settings, load_settings


def test_defaults_are_embedded_sqlite_under_the_data_dir(tmp_path):
    settings = load_settings(env={"OUROBOT_DATA_DIR": str(tmp_path)})
    assert settings.embedded
    assert settings.effective_database_url == f"sqlite:///{tmp_path / 'ourobot.sqlite3'}"
    assert settings.github_api_url == "https://api.github.com"
    assert not settings.has_app_credentials()


def test_environment_names_and_model_keys(tmp_path):
    key = tmp_path / "app.pem"
    key.write_text("-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----\n")
    settings = load_settings(
        env={
            "OUROBOT_APP_ID": "42",
            "OUROBOT_PRIVATE_KEY_PATH": str(key),
            "OUROBOT_WEBHOOK_SECRET": "s",
            "OUROBOT_GITHUB_API_URL": "http://127.0.0.1:9/api/",
            "OUROBOT_REDIS_URL": "redis://127.0.0.1:6379/3",
            "OUROBOT_OPERATORS": "alice, Bob ,,",
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        }
    )
    assert settings.app_id == 42
    assert settings.has_app_credentials()
    assert settings.private_key_pem().startswith("-----BEGIN")
    assert settings.github_api_url == "http://127.0.0.1:9/api"
    assert not settings.embedded
    assert settings.operators == ("alice", "Bob")
    assert settings.anthropic_api_key.get_secret_value() == "sk-ant-test"
    assert settings.openai_base_url == "http://127.0.0.1:9/v1"


def test_secrets_do_not_show_in_repr():
    settings = load_settings(env={"OUROBOT_WEBHOOK_SECRET": "hunter2", "OPENAI_API_KEY": "sk-x"})
    assert "hunter2" not in repr(settings)
    assert "sk-x" not in repr(settings)


def test_bad_value_is_one_line_naming_the_variable():
    with pytest.raises(ConfigError) as info:
        load_settings(env={"OUROBOT_APP_ID": "not-a-number"})
    assert str(info.value).startswith("OUROBOT_APP_ID:")
    assert "\n" not in str(info.value)


def test_unreadable_key_file_is_a_config_error(tmp_path):
    settings = load_settings(env={"OUROBOT_PRIVATE_KEY_PATH": str(tmp_path / "missing.pem")})
    with pytest.raises(ConfigError, match="OUROBOT_PRIVATE_KEY_PATH"):
        settings.private_key_pem()


def test_settings_are_frozen():
    settings = Settings()
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen error type is internal
        settings.app_id = 5  # type: ignore[misc]


def test_process_environment_is_read_only_when_asked(monkeypatch):
    monkeypatch.setenv("OUROBOT_APP_ID", "7")
    assert load_settings().app_id == 7
    assert load_settings(env={}).app_id is None


@pytest.mark.parametrize("url", ["notaurl", "http://127.0.0.1:6379/0", "127.0.0.1:6379"])
def test_a_redis_url_that_is_not_one_is_a_one_line_config_error(url: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({"OUROBOT_REDIS_URL": url})
    assert str(raised.value) == (
        "OUROBOT_REDIS_URL: not a Redis URL: expected redis://HOST:PORT/DB, rediss://... "
        "or unix://PATH"
    )


def test_an_empty_redis_url_means_embedded_mode() -> None:
    assert load_settings({"OUROBOT_REDIS_URL": ""}).embedded
    assert load_settings({"OUROBOT_REDIS_URL": "unix:///run/redis.sock"}).redis_url


@pytest.mark.parametrize("bad", ["", "two words", "q\nx"])
def test_the_celery_queue_defaults_to_ourobot_and_a_bad_name_is_one_line(bad):
    assert load_settings(env={}).celery_queue == "ourobot"
    named = load_settings(env={"OUROBOT_CELERY_QUEUE": "ourobot-demo-1a"})
    assert named.celery_queue == "ourobot-demo-1a"
    with pytest.raises(ConfigError, match=r"^OUROBOT_CELERY_QUEUE: [^\n]+$"):
        load_settings(env={"OUROBOT_CELERY_QUEUE": bad})
