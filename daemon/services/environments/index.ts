/** Environments and deployments (GitLab 8.13): the API's actions and the deployment a successful build records. */
export {
  countEnvironments, createEnvironment, deleteEnvironment, environmentsById, findEnvironment, listEnvironments, updateEnvironment,
  type EnvironmentParams,
} from './environments.js';
export { countDeployments, findDeployment, listDeployments, recordDeploymentIn } from './deployments.js';
