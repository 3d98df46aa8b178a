/** Environments and deployments (GitLab 8.13): the API's actions and the deployment a successful build records. */
export {
  createEnvironment, deleteEnvironment, findEnvironment, updateEnvironment,
  type EnvironmentParams,
} from './environments.js';
export { findDeployment, recordDeploymentIn } from './deployments.js';
