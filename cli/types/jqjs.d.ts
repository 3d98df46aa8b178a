/** Types of @michaelhomer/jqjs (a pure-JavaScript jq; the package ships none): the parts `gantry api --jq` uses. */
declare module '@michaelhomer/jqjs' {
  /** A compiled jq program: each value it yields for an input. */
  type Filter = (input: unknown) => Iterable<unknown>;
  interface Jq {
    (program: string): Filter;
    compile(program: string): Filter;
  }
  const jq: Jq;
  export default jq;
}
