// The greetings library: each demo task adds one function below.

/** Says hello to one person. */
export function greet(name) {
  return `Hello, ${name}!`;
}
