import type { Sql } from "../../shared/db.ts";
import { workflowChanges } from "../../shared/changes.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { checkTemplates, createWorkflow, requireWorkflow, updateWorkflow, type Workflow } from "./queries.ts";
import type { CreateWorkflowData, UpdateWorkflowData } from "./schemas.ts";

/**
 * Creates a workflow once its steps' templates are found, and tells this process's caches (event
 * types) that workflows changed. The API's create and the dashboard's both come here, so that a
 * workflow is checked the same wherever it is made.
 */
export async function saveNewWorkflow(sql: Sql, teamId: string, body: CreateWorkflowData): Promise<Workflow> {
  await checkTemplates(sql, teamId, body.steps);
  const workflow = await createWorkflow(sql, teamId, body);
  workflowChanges.note();
  return workflow;
}

/**
 * Changes a team's workflow (steps, when given, replace the steps, each checked for its template):
 * 404 'Workflow not found' for another team's or an unknown one. Shared by the API's PATCH and the
 * dashboard.
 */
export async function saveWorkflowChanges(
  sql: Sql,
  teamId: string,
  id: string,
  body: UpdateWorkflowData,
): Promise<Workflow> {
  if (body.steps) {
    await requireWorkflow(sql, teamId, id);
    await checkTemplates(sql, teamId, body.steps);
  }
  const workflow = await updateWorkflow(sql, teamId, id, body);
  if (!workflow) throw new NotFoundError("Workflow not found", "workflow_not_found");
  workflowChanges.note();
  return workflow;
}
