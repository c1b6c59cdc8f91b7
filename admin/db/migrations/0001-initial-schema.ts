import type { Migration } from '../migrate.js';

/** Users, roles, menus, buttons, APIs, dictionaries and their links. Status '1' = enable, '2' = disable. */
export const initialSchema: Migration = {
  version: 1,
  name: 'initial-schema',
  sql: `
CREATE TABLE menus (
  id serial PRIMARY KEY,
  menu_name varchar(100) NOT NULL,
  menu_type varchar(1) NOT NULL DEFAULT '2',
  route_name varchar(100) NOT NULL UNIQUE,
  route_path varchar(200) NOT NULL,
  parent_id integer NOT NULL DEFAULT 0,
  path_param varchar(200),
  route_param jsonb,
  component varchar(200),
  redirect varchar(200),
  props boolean NOT NULL DEFAULT false,
  constant boolean NOT NULL DEFAULT false,
  "order" integer NOT NULL DEFAULT 0,
  i18n_key varchar(100),
  icon varchar(100),
  icon_type varchar(1) NOT NULL DEFAULT '1',
  href varchar(200),
  multi_tab boolean NOT NULL DEFAULT false,
  keep_alive boolean NOT NULL DEFAULT false,
  hide_in_menu boolean NOT NULL DEFAULT false,
  active_menu_id integer,
  fixed_index_in_tab integer,
  status_type varchar(1) NOT NULL DEFAULT '1',
  created_by integer, created_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer, updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT menus_route_path_key UNIQUE (route_path)
);

CREATE TABLE buttons (
  id serial PRIMARY KEY,
  button_code varchar(100) NOT NULL UNIQUE,
  button_desc varchar(200) NOT NULL DEFAULT '',
  menu_id integer REFERENCES menus(id) ON DELETE SET NULL,
  status_type varchar(1) NOT NULL DEFAULT '1',
  created_by integer, created_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer, updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE apis (
  id serial PRIMARY KEY,
  api_method varchar(10) NOT NULL,
  api_path varchar(300) NOT NULL,
  summary varchar(300) NOT NULL DEFAULT '',
  tags text[] NOT NULL DEFAULT '{}',
  status_type varchar(1) NOT NULL DEFAULT '1',
  is_system boolean NOT NULL DEFAULT true,
  created_by integer, created_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer, updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT apis_method_path_key UNIQUE (api_method, api_path)
);

CREATE TABLE roles (
  id serial PRIMARY KEY,
  role_name varchar(20) NOT NULL,
  role_code varchar(20) NOT NULL,
  role_desc varchar(500),
  data_scope varchar(10) NOT NULL DEFAULT 'all',
  home_menu_id integer REFERENCES menus(id) ON DELETE SET NULL,
  status_type varchar(1) NOT NULL DEFAULT '1',
  created_by integer, created_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer, updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT roles_role_code_key UNIQUE (role_code),
  CONSTRAINT roles_role_name_key UNIQUE (role_name)
);

CREATE TABLE users (
  id serial PRIMARY KEY,
  user_name varchar(20) NOT NULL,
  password text NOT NULL,
  nick_name varchar(30),
  user_gender varchar(1) NOT NULL DEFAULT '3',
  user_email varchar(255),
  user_phone varchar(20),
  last_login timestamptz,
  status_type varchar(1) NOT NULL DEFAULT '1',
  token_version integer NOT NULL DEFAULT 0,
  must_change_password boolean NOT NULL DEFAULT false,
  created_by integer, created_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer, updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT users_user_name_key UNIQUE (user_name),
  CONSTRAINT users_user_email_key UNIQUE (user_email),
  CONSTRAINT users_user_phone_key UNIQUE (user_phone)
);

CREATE TABLE user_roles (
  user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role_id integer NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, role_id)
);
CREATE TABLE role_menus (
  role_id integer NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  menu_id integer NOT NULL REFERENCES menus(id) ON DELETE CASCADE,
  PRIMARY KEY (role_id, menu_id)
);
CREATE TABLE role_buttons (
  role_id integer NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  button_id integer NOT NULL REFERENCES buttons(id) ON DELETE CASCADE,
  PRIMARY KEY (role_id, button_id)
);
CREATE TABLE role_apis (
  role_id integer NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  api_id integer NOT NULL REFERENCES apis(id) ON DELETE CASCADE,
  PRIMARY KEY (role_id, api_id)
);

CREATE TABLE dictionaries (
  id serial PRIMARY KEY,
  dict_type varchar(100) NOT NULL,
  label varchar(100) NOT NULL,
  value varchar(100) NOT NULL,
  "order" integer NOT NULL DEFAULT 0,
  status varchar(1) NOT NULL DEFAULT '1',
  remark varchar(500),
  deleted_at timestamptz,
  created_by integer, created_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer, updated_at timestamptz NOT NULL DEFAULT now()
);
-- Soft-deleted rows must not block re-creating the same (type, value).
CREATE UNIQUE INDEX dictionaries_type_value_key ON dictionaries (dict_type, value) WHERE deleted_at IS NULL;
CREATE INDEX user_roles_role_idx ON user_roles (role_id);
`,
};
