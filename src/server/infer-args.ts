import type { JsonObject } from "../protocol/messages.js";
import type { StandardSchemaV1 } from "./schema.js";
import type { PromptArgument } from "./types.js";

// Types only: handler arguments inferred from the schemas tools and prompts declare. The
// recursion counts down through `Prev`, so a deep schema ends in `unknown` well before the
// compiler's instantiation limit.
type Prev = [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
type MaxDepth = 10;

/**
 * The TypeScript type of the values a JSON Schema literal accepts; `unknown` where a keyword is
 * not understood ($ref, allOf, if/then) or lies ten or more subschemas deep.
 *
 * @example
 * ```ts
 * import type { InferJsonSchema } from "mcp-mount";
 *
 * const schema = {
 *   type: "object",
 *   properties: { city: { type: "string" }, days: { type: "integer" } },
 *   required: ["city"],
 *   additionalProperties: false,
 * } as const;
 * type Forecast = InferJsonSchema<typeof schema>; // { city: string; days?: number }
 * ```
 */
export type InferJsonSchema<Schema> = Infer<Schema, MaxDepth>;

type Infer<S, D extends number> = [D] extends [0]
  ? unknown
  : S extends { const: infer C }
    ? C
    : S extends { enum: readonly (infer E)[] }
      ? E
      : S extends { anyOf: readonly unknown[] }
        ? Either<Infer<S["anyOf"][number], Prev[D]>, S, D>
        : S extends { oneOf: readonly unknown[] }
          ? Either<Infer<S["oneOf"][number], Prev[D]>, S, D>
          : Typed<S, D>;

/** A union of branches, unless one is not understood (e.g. `required` alone): then `type` decides. */
type Either<Branches, S, D extends number> = unknown extends Branches ? Typed<S, D> : Branches;

type Typed<S, D extends number> = S extends { type: infer T }
  ? T extends readonly (infer Name)[]
    ? Named<Name, S, D>
    : Named<T, S, D>
  : S extends { properties: object }
    ? ObjectOf<S, D>
    : unknown;

type Named<Name, S, D extends number> = Name extends "string"
  ? string
  : Name extends "number" | "integer"
    ? number
    : Name extends "boolean"
      ? boolean
      : Name extends "null"
        ? null
        : Name extends "array"
          ? ArrayOf<S, D>
          : Name extends "object"
            ? ObjectOf<S, D>
            : unknown;

type ArrayOf<S, D extends number> = S extends { items: infer Item extends object }
  ? Infer<Item, Prev[D]>[]
  : unknown[];

type ObjectOf<S, D extends number> = Flatten<
  (S extends { properties: infer P extends object }
    ? Properties<P, RequiredKeys<S>, Prev[D]>
    : unknown) &
    Rest<S, D>
>;

type Properties<P, Required, D extends number> = {
  -readonly [K in keyof P as K extends Required ? K : never]-?: Infer<P[K], D>;
} & {
  -readonly [K in keyof P as K extends Required ? never : K]+?: Infer<P[K], D>;
};

/** Names in `required`; a list typed only as `string[]` makes none of them required. */
type RequiredKeys<S> = S extends { required: readonly (infer K)[] }
  ? string extends K
    ? never
    : K
  : never;

/** Keys beyond `properties`: none, typed by a schema, or anything (the JSON Schema default). */
type Rest<S, D extends number> = S extends { additionalProperties: false }
  ? unknown
  : S extends { additionalProperties: infer A extends object }
    ? { [key: string]: Infer<A, Prev[D]> }
    : { [key: string]: unknown };

type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** What a tool handler receives for `input`: its output type, or `JsonObject` when unknown. */
export type ToolArgs<Input> =
  Input extends StandardSchemaV1<unknown, infer Output>
    ? Output
    : unknown extends InferJsonSchema<Input>
      ? JsonObject
      : InferJsonSchema<Input>;

/** What a prompt handler receives for `arguments`: required names are strings, others optional. */
export type PromptArgs<List extends readonly PromptArgument[]> = string extends List[number]["name"]
  ? Record<string, string>
  : Flatten<
      { [A in List[number] as A["required"] extends true ? A["name"] : never]: string } & {
        [A in List[number] as A["required"] extends true ? never : A["name"]]?: string;
      }
    >;
