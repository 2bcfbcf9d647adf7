// A typedoc plugin: every exported function must have a comment. typedoc's own check
// (validation.notDocumented with "Function") also demands one on every method of every class
// and interface; the rule here is "each public export has a TSDoc comment".
import { Converter, ReflectionKind } from "typedoc";

/** @param {import("typedoc").Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    for (const fn of context.project.getReflectionsByKind(ReflectionKind.Function)) {
      if (!fn.hasComment() && !(fn.signatures ?? []).some((signature) => signature.hasComment())) {
        app.logger.warn(`${fn.getFriendlyFullName()} (Function), defined in ${fn.sources?.[0]?.fileName ?? "?"}, does not have any documentation`);
      }
    }
  });
}
