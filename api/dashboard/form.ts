/** A form field as text ('' when absent or a file). */
export function field(form: Record<string, unknown>, name: string): string {
  const value = form[name];
  return typeof value === "string" ? value : "";
}
