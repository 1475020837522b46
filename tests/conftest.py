import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _quiet_inner_asyncio(request: pytest.FixtureRequest) -> None:
    """Inner sessions load pytest-asyncio from the environment; give it the setting it warns about."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
