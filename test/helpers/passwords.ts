// Passwords for tests: one strong enough for every page that sets a password, and the weak ones each
// of those pages must refuse (the same rule everywhere: src/modules/signup/password.ts).
import { expect } from "bun:test";
import { attributeOf, screenOf } from "./screen.ts";

/** A password every page accepts (zxcvbn score 4, no part of any test address). */
export const STRONG_PASSWORD = "lantern orbit maple 47";

/**
 * Passwords that must be refused, for a person with address `email`: what each is, the password, and
 * a part of the message shown next to the password field.
 */
export function weakPasswords(email: string): { what: string; password: string; message: RegExp }[] {
  return [
    { what: "ten spaces", password: " ".repeat(10), message: /spaces only/ },
    { what: "mostly spaces", password: "ab        cd", message: /Spaces in a row count as one/ },
    { what: "a common password", password: "password1234", message: /easy to guess.*commonly used/ },
    { what: "the e-mail address itself", password: email, message: /easy to guess/ },
  ];
}

/** The page shows `message` as the password field's own error (described by it, marked invalid). */
export function expectPasswordFieldError(page: string, message: RegExp): void {
  const screen = screenOf(page);
  const field = screen.getByLabelText("Password");
  expect(attributeOf(field, "aria-invalid")).toBe("true");
  expect(screen.descriptionOf(field)).toMatch(message);
  // The summary at the top links to it too.
  expect(screen.getByRole("alert").children.length).toBeGreaterThan(0);
}
