// Forget a subject: erases everything the hub holds about one user or agent, in every
// service (AdminService.ForgetSubject). A review step names what will be erased before
// anything is; the answer is each service's counts. Admins may forget anyone, a user only
// itself: the server decides, and its refusal is shown as it said it.

import { call } from "../api.js";
import { button, empty, errorBox, h, num, table } from "../dom.js";

const SUBJECT = /^(user|agent):[^\s:]+(:[^\s:]+)?$/;

const COMMON = ["knowledge: the records it owns, deleted ones included",
  "resources: the ones it owns, every version (the audit trail keeps a record naming each, never its content)"];
const ERASED = {
  user: [...COMMON, "cognition: its traces, with their logs and extractions",
    "dream: the memory events it is the user or the sender of, its memos, its profile, the historian jobs about it, "
    + "the dream schedules it made"],
  agent: [...COMMON, "cognition: every trace of the agent, with their logs and extractions",
    "dream: the memory events it is the sender of, its memos, the historian jobs about it, its memory documents and "
    + "its dream schedules"],
};

export async function render(view) {
  const subject = h("input", { id: "forget-subject", placeholder: "user:ID or agent:ID", size: 32, required: true,
    "aria-label": "subject to forget" });
  const step = h("div", { id: "forget-step" });
  const form = h("form", { class: "row", id: "forget-form" }, subject, h("button", { type: "submit" }, "Review"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    review(step, subject.value.trim());
  });
  view.append(h("h1", {}, "Forget a subject"), h("section", { class: "panel" },
    h("p", {}, "Erases everything the hub holds about one user or agent, in every service, for good: there is no undo. ",
      "Audit records keep a tombstone without content. An admin may forget anyone; any other user only itself (",
      h("code", {}, "user:"), " and its own id). Forgetting twice is safe: the second time erases nothing more."),
    form, step));
}

// The confirmation step: what will be erased, and the button that erases it.
function review(step, subject) {
  if (!SUBJECT.test(subject)) {
    step.replaceChildren(errorBox({ code: "INVALID_ARGUMENT", message: `subject: "${subject}" is not user:ID or agent:ID` }));
    return;
  }
  const kind = subject.split(":", 1)[0];
  const result = h("div", { id: "forget-result" });
  const erase = button(`Forget ${subject} for good`, async () => {
    erase.disabled = true;
    cancel.disabled = true;
    result.replaceChildren(h("p", { class: "muted loading" }, "Forgetting…"));
    try {
      const response = await call("admin", "ForgetSubject", { subject });
      result.replaceChildren(counts(subject, response.services || []));
    } catch (error) {
      result.replaceChildren(errorBox(error));
      cancel.disabled = false;
    }
  }, { class: "danger", id: "forget-confirm" });
  const cancel = button("Cancel", () => step.replaceChildren(), { id: "forget-cancel" });
  step.replaceChildren(h("div", { class: "card", id: "forget-review" },
    h("p", {}, h("strong", {}, `This erases, for ${subject}:`)),
    h("ul", { class: "forget-what" }, ERASED[kind].map((item) => h("li", {}, item))),
    h("div", { class: "row" }, erase, cancel)), result);
}

function counts(subject, services) {
  const rows = services.flatMap((service) => Object.entries(service.erased || {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([what, count]) => h("tr", { class: "erased", "data-service": service.service, "data-kind": what },
      h("td", {}, service.service), h("td", {}, what), h("td", { class: "erased-count" }, num(count)))));
  const total = services.reduce((sum, service) => sum + Object.values(service.erased || {}).reduce((a, b) => a + num(b), 0), 0);
  return h("div", { class: "notice", id: "forget-done" },
    h("p", {}, h("strong", {}, `Forgot ${subject}: `), `${total} item(s) erased.`),
    rows.length ? table(["Service", "What", "Erased"], rows) : empty("Nothing was held about this subject."));
}
