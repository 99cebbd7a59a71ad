"""Driving the console in the browser: open a page with a token, wait for what it shows,
collect the browser's console errors, save screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

TOKEN_KEY = "knowhub.console.token"


class Console:
    def __init__(self, driver: WebDriver, base_url: str, artifacts: Path) -> None:
        self.driver = driver
        self.base_url = base_url
        self.artifacts = artifacts

    def open(self, hash_path: str, token: str | None) -> Console:
        """Loads the console at `#hash_path` signed in with `token` (in sessionStorage, as
        the sign-in screen keeps it), from scratch."""
        self.driver.get(f"{self.base_url}/console/#/none")
        self.driver.execute_script(
            "sessionStorage.clear(); localStorage.clear();"
            " if (arguments[0]) sessionStorage.setItem(arguments[1], arguments[0]);",
            token or "",
            TOKEN_KEY,
        )
        self.driver.get("about:blank")
        self.errors()  # forget what the loads before this one logged
        self.driver.get(f"{self.base_url}/console/#{hash_path}")
        return self

    def wait(
        self, css: str, text: str = "", timeout: float = 20.0, within: WebElement | None = None
    ) -> WebElement:
        """The first element matching `css` whose text contains `text`, once there is one."""
        scope: Any = within or self.driver

        def found(_driver: WebDriver) -> WebElement | bool:
            for element in scope.find_elements(By.CSS_SELECTOR, css):
                if text in element.text:
                    return element
            return False

        # A page re-rendering detaches the elements found a moment before: look again.
        wait = WebDriverWait(
            self.driver,
            timeout,
            poll_frequency=0.05,
            ignored_exceptions=[StaleElementReferenceException],
        )
        try:
            return wait.until(found)
        except TimeoutException as exc:
            shown = self.driver.find_element(By.ID, "main").text[:2000]
            raise AssertionError(
                f"no {css!r} containing {text!r}; the page shows:\n{shown}"
            ) from exc

    def find_all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def click(self, css: str, text: str = "", within: WebElement | None = None) -> None:
        self.wait(css, text, within=within).click()

    def page_text(self) -> str:
        return self.driver.find_element(By.TAG_NAME, "body").text

    def page_source(self) -> str:
        return self.driver.page_source

    def errors(self) -> list[str]:
        """The browser's SEVERE console entries since the last call (JS errors, failed
        requests)."""
        return [
            entry["message"]
            for entry in self.driver.get_log("browser")
            if entry["level"] == "SEVERE"
        ]

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        height = self.driver.execute_script("return document.body.scrollHeight")
        self.driver.set_window_size(1400, max(900, min(int(height) + 40, 6000)))
        self.driver.save_screenshot(str(path))
        self.driver.set_window_size(1400, 1800)
        return path
