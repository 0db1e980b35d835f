import { prepareTemplateDatabase } from '@opsi/db/testing';

export default async function setup() {
  await prepareTemplateDatabase();
}
