// The prompt template: placeholders substituted in one pass, so text inside a value is never expanded again.

export const PLACEHOLDERS = [
  'FEATURE_NAME',
  'SPEC_PATH',
  'PLAN_PATH',
  'TASKS_PATH',
  'PROGRESS_PATH',
  'ITERATION_NUMBER',
  'MAX_ITERATIONS',
  'CURRENT_TASK',
] as const;

export type Placeholder = (typeof PLACEHOLDERS)[number];
export type TemplateValues = Record<Placeholder, string>;

const PLACEHOLDER = /\{([A-Z][A-Z0-9_]*)\}/g;

/** Replaces `{NAME}` with `values[NAME]` in a single scan; unknown names are left as written. */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(values, name) ? values[name]! : whole));
}

/** Placeholders of the contract that a template does not use (a custom template may drop some). */
export function missingPlaceholders(template: string): Placeholder[] {
  return PLACEHOLDERS.filter((name) => !template.includes(`{${name}}`));
}
