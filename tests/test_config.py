"""Configuration: precedence, profiles, private file mode, and no token in the file."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pigeon import locations
from pigeon.config import (
    DEFAULT_BASE_URL,
    ConfigError,
    ensure_config_file,
    load_config,
    save_profile,
    update_config_file,
)

FILE = """
default_profile = "work"

[profiles.work]
base_url = "https://work.example"

[profiles.home]
base_url = "https://home.example"

[ui]
theme = "nord"
keymap = { "app.quit" = "ctrl+q" }
"""


@pytest.fixture
def config_file() -> Path:
    path = locations.config_file()
    path.parent.mkdir(parents=True)
    path.write_text(FILE)
    return path


def test_paths_follow_the_environment_overrides(isolated_environment: Path) -> None:
    assert locations.config_file() == isolated_environment / "config" / "config.toml"
    assert locations.data_dir() == isolated_environment / "data"
    assert locations.download_dir() == isolated_environment / "downloads"


def test_defaults_without_a_file() -> None:
    config = load_config()
    assert (config.profile, config.base_url, config.base_url_source) == ("default", DEFAULT_BASE_URL, "default")
    assert config.ui.theme == "textual-dark"


def test_the_file_gives_the_default_profile_and_ui(config_file: Path) -> None:
    config = load_config()
    assert (config.profile, config.base_url) == ("work", "https://work.example")
    assert config.ui.theme == "nord"
    assert config.ui.keymap == {"app.quit": "ctrl+q"}


def test_environment_beats_the_file_and_flags_beat_the_environment(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIGEON_PROFILE", "home")
    assert load_config().base_url == "https://home.example"
    monkeypatch.setenv("PIGEON_BASE_URL", "https://env.example")
    config = load_config()
    assert (config.profile, config.base_url, config.base_url_source) == (
        "home",
        "https://env.example",
        "PIGEON_BASE_URL",
    )

    flagged = load_config(profile="work", base_url="https://flag.example")
    assert (flagged.profile, flagged.base_url, flagged.base_url_source) == (
        "work",
        "https://flag.example",
        "--base-url",
    )
    assert load_config(profile="work").base_url == "https://env.example"  # env base URL still beats the file


def test_a_profile_not_in_the_file_uses_defaults(config_file: Path) -> None:
    config = load_config(profile="elsewhere")
    assert (config.profile, config.base_url) == ("elsewhere", DEFAULT_BASE_URL)


def test_the_file_is_created_private_and_stays_private() -> None:
    path = ensure_config_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    save_profile("work", base_url="https://work.example")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config(profile="work").base_url == "https://work.example"
    assert load_config().profile == "default"  # the first profile saved stays the default


def test_a_token_in_the_file_is_refused(config_file: Path) -> None:
    config_file.write_text('[profiles.work]\nbase_url = "https://w.example"\ntoken = "abc"\n')
    with pytest.raises(ConfigError, match="keyring"):
        load_config()
    with pytest.raises(ConfigError, match="must not hold token"):
        update_config_file(lambda data: data.update(token="abc"))


def test_broken_toml_gives_a_clear_error(config_file: Path) -> None:
    config_file.write_text("default_profile = \n")
    with pytest.raises(ConfigError, match=r"config\.toml is not valid TOML"):
        load_config()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[profiles.work]\npoll_interval = 1\n", r"profiles\.work\.poll_interval: should be at least 5 seconds"),
        ('[profiles.work]\npoll_interval = "often"\n', r"profiles\.work\.poll_interval: should be a number"),
        ('[profiles.work]\nlive = "yes"\n', r"profiles\.work\.live: should be true or false"),
        ("profiles = 3\n", r"profiles: should be a table"),
        ("[ui]\ntheme = 7\n", r"ui\.theme: should be a string"),
        ('[ui.keymap]\n"app.quit" = 1\n', r"ui\.keymap\.app\.quit: should be a string of keys"),
    ],
)
def test_a_wrong_value_names_the_file_and_the_key(config_file: Path, text: str, message: str) -> None:
    config_file.write_text(text)
    with pytest.raises(ConfigError, match=message) as raised:
        load_config()
    assert str(config_file) in str(raised.value)


def test_live_and_poll_interval_reach_the_profile(config_file: Path) -> None:
    config_file.write_text('[profiles.work]\nlive = true\npoll_interval = 30\nunknown = "ignored"\n')
    profile = load_config(profile="work").profile_config
    assert (profile.live, profile.poll_interval) == (True, 30.0)


BAD_BASE_URLS = [
    ("http://127.0.0.1:99999", "is not a valid URL"),
    ("http://127.0.0.1:0", "has port 0"),
    ("http://[::1", "is not a valid URL"),
    ("http://mail\x1b]2;pwned\x07.example", "control character"),
    ("mail.example.com", "should start with http:// or https://"),
    ("https://user:pw@mail.example", "no user or password"),
    ("https://mail.example/?x=1", "no query"),
]


@pytest.mark.parametrize(("url", "says"), BAD_BASE_URLS)
def test_a_bad_base_url_in_the_file_is_one_line_naming_the_setting_and_the_file(
    config_file: Path, url: str, says: str
) -> None:
    import tomli_w

    config_file.write_text(tomli_w.dumps({"profiles": {"work": {"base_url": url}}}))
    with pytest.raises(ConfigError) as raised:
        load_config(profile="work")
    message = str(raised.value)
    assert says in message
    assert "profiles.work.base_url" in message
    assert str(config_file) in message
    assert "\n" not in message
    assert "\x1b" not in message
    assert "\x07" not in message


@pytest.mark.parametrize(("url", "says"), BAD_BASE_URLS)
def test_a_bad_base_url_from_the_environment_or_a_flag_names_it(
    monkeypatch: pytest.MonkeyPatch, url: str, says: str
) -> None:
    monkeypatch.setenv("PIGEON_BASE_URL", url)
    with pytest.raises(ConfigError, match=f"^PIGEON_BASE_URL: .*{says}"):
        load_config()
    with pytest.raises(ConfigError, match=f"^--base-url: .*{says}"):
        load_config(base_url=url)


def test_good_base_urls_pass_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    for url in (
        "http://127.0.0.1:8025",
        "https://mail.example.com/api/",
        "http://[::1]:8025",
        "https://bücher.example",
    ):
        assert load_config(base_url=url).base_url == url


def test_a_token_command_reaches_the_profile_as_a_list(config_file: Path) -> None:
    config_file.write_text('[profiles.work]\ntoken_command = ["pass", "show", "pigeon/work"]\n')
    assert load_config(profile="work").profile_config.token_command == ["pass", "show", "pigeon/work"]
    assert load_config(profile="home").profile_config.token_command == []
    config_file.write_text('[profiles.work]\ntoken_command = "pass show pigeon/work"\n')
    with pytest.raises(ConfigError, match=r"profiles\.work\.token_command: should be a list of strings"):
        load_config(profile="work")
