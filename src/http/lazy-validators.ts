// Route validators built at a route's first request instead of at start-up. Fastify has ajv compile
// every route's schemas while the app becomes ready, and that is most of the CPU a start costs
// (each server, cluster worker and CLI command that builds the app): a route that is never called
// need not pay for it. What is built is exactly what Fastify builds (its own ajv compiler, the
// same options and pool); only the moment changes. A schema ajv cannot compile therefore fails its
// route's first request (a 500), not the start: the contract and fuzz tests call every route.
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';

type Validator = ReturnType<ReturnType<BuildCompilerFromPool>>;

export function lazyValidators(): BuildCompilerFromPool {
  const pool = AjvCompiler();
  return (externalSchemas, options) => {
    const compile = pool(externalSchemas, options);
    return (route) => {
      // Fastify lowercases a headers schema's names for its own compiler, not for one given to it.
      if ((route as { httpPart?: string }).httpPart === 'headers')
        throw new Error('a schema for request headers needs the names lowercased that Fastify lowercases for its own compiler (http/lazy-validators.ts)');
      let built: Validator | undefined;
      const validate = Object.assign(
        (data: unknown, dataCxt?: Parameters<Validator>[1]) => {
          built ??= compile(route);
          const result = built(data, dataCxt);
          validate.errors = built.errors;
          return result;
        },
        // Every validator ajv builds has `schemaEnv`, and Fastify looks for it before calling one:
        // it then passes the parent object, so that ajv may set defaults on the value itself.
        { errors: null as Validator['errors'], schemaEnv: true },
      );
      return validate as unknown as Validator;
    };
  };
}
