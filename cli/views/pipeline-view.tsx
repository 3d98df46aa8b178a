/** The live pipeline view of `gantry pipeline watch`: a header and the stages as columns of builds (like GitLab's graph). */
import { Box, Text } from 'ink';
import { elapsed, formatSeconds, isFinal, latestBuilds, shortSha, stagesOf, statusColor, statusIcon, type Build, type Pipeline } from './ci-format.js';

/** Props of PipelineView. */
export interface PipelineViewProps {
  pipeline: Pipeline;
  builds: Build[];
  /** The time durations of running things are measured to. */
  now: number;
  /** A transient problem to show under the graph (e.g. a failed refresh). */
  note?: string | null;
}

/** One pipeline with its stages and builds, states and durations. */
export function PipelineView({ pipeline: p, builds, now, note }: PipelineViewProps) {
  const stages = stagesOf(latestBuilds(builds), builds);
  const time = p.duration !== null && isFinal(p.status) ? formatSeconds(p.duration) : elapsed(p.started_at, p.finished_at, now);
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>Pipeline #{p.id}</Text>{'  '}
        <Text color={statusColor(p.status)}>{statusIcon(p.status)} {p.status}</Text>{'  '}
        <Text>{p.ref}</Text> <Text dimColor>@ {shortSha(p.sha)}</Text>
        {time ? <Text dimColor>{'  '}{time}</Text> : null}
      </Text>
      {p.yaml_errors ? <Text color="red">yaml errors: {p.yaml_errors}</Text> : null}
      <Box flexDirection="row" marginTop={1}>
        {stages.map((stage) => (
          <Box key={stage.name} flexDirection="column" marginRight={4}>
            <Text bold color={statusColor(stage.status)}>{stage.name}</Text>
            {stage.builds.map((b) => (
              <Text key={b.id}>
                <Text color={statusColor(b.status)}>{statusIcon(b.status)}</Text> {b.name} <Text dimColor>#{b.id} {b.status}{elapsed(b.started_at, b.finished_at, now) ? ` ${elapsed(b.started_at, b.finished_at, now)}` : ''}</Text>
              </Text>
            ))}
          </Box>
        ))}
        {stages.length === 0 ? <Text dimColor>no builds</Text> : null}
      </Box>
      {note ? <Text color="yellow">{note}</Text> : null}
    </Box>
  );
}
